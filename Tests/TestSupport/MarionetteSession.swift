import ChildProcesses
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's Firefox ESR, headless, driven over Marionette: Firefox's own remote protocol, spoken on a
/// loopback TCP port. Each message is `LENGTH:JSON`; a command is `[0, id, name, parameters]` and its
/// answer `[1, id, error, result]`. The command names are WebDriver's (`WebDriver:ExecuteScript`, …),
/// so the console test is the same test in both browsers.
final class MarionetteSession: BrowserSession {
    static let firefoxPath = "/usr/bin/firefox-esr"

    private let firefox: Subprocess
    private let profile: URL
    private let connection: RawConnection
    private var nextID = 0

    init(width: Int, height: Int) throws {
        let port = try ServerProcess.freePort()
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-firefox-\(getpid())-\(port)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        // A fresh profile: Marionette on our port, a fake microphone that needs no permission prompt,
        // a mock audio backend, and nothing that would go to the network on its own (the machine has none to offer).
        let preferences: [(String, String)] = [
            ("marionette.port", "\(port)"),
            ("media.navigator.streams.fake", "true"),
            ("media.navigator.permission.disabled", "true"),
            // A mock audio backend: a test machine has no sound card, and without one Firefox never
            // lets an AudioContext run (Chromium's headless mode has a fake output of its own).
            ("media.cubeb.force_mock_context", "true"),
            ("browser.shell.checkDefaultBrowser", "false"),
            ("datareporting.policy.dataSubmissionEnabled", "false"),
            ("toolkit.telemetry.reportingpolicy.firstRun", "false"),
            ("app.update.disabledForTesting", "true"),
            ("browser.startup.homepage_override.mstone", "\"ignore\""),
        ]
        try preferences.map { "user_pref(\"\($0.0)\", \($0.1));" }.joined(separator: "\n")
            .write(to: profile.appendingPathComponent("user.js"), atomically: true, encoding: .utf8)
        firefox = try Subprocess(Subprocess.Configuration(executable: Self.firefoxPath,
                                                          arguments: ["--headless", "--marionette", "--no-remote", "--profile", profile.path]))
        var connected: RawConnection?
        _ = Polling.until(seconds: 60) {
            connected = try? RawConnection(port: port, timeoutSeconds: 120)
            return connected != nil
        }
        do {
            guard let connection = connected else { throw WebDriver.Failure("Firefox did not open Marionette on port \(port) within 60 s") }
            self.connection = connection
            let hello = try Self.receive(connection) as? [String: Any]
            guard hello?["marionetteProtocol"] as? Int == 3 else { throw WebDriver.Failure("unexpected Marionette greeting \(String(describing: hello))") }
            _ = try call("WebDriver:NewSession", ["capabilities": ["alwaysMatch": ["acceptInsecureCerts": false]]])
            _ = try call("WebDriver:SetWindowRect", ["width": width, "height": height])
        } catch {
            firefox.signal(SIGKILL)
            firefox.waitUntilExit()
            try? FileManager.default.removeItem(at: profile)
            throw error
        }
    }

    deinit {
        _ = try? call("Marionette:Quit", ["flags": ["eForceQuit"]])
        // Quit closes the browser within a second or two; a browser that does not is killed, because
        // a test must not wait on it.
        if !Polling.until(seconds: 15, { !firefox.isRunning }) { firefox.signal(SIGKILL) }
        firefox.waitUntilExit()
        try? FileManager.default.removeItem(at: profile)
    }

    func perform(_ command: BrowserCommand) throws -> Any? {
        let result: Any? = switch command {
        case .navigate(let url): try call("WebDriver:Navigate", ["url": url])
        case .execute(let script, let arguments): try call("WebDriver:ExecuteScript", ["script": script, "args": arguments])
        case .find(let css): try call("WebDriver:FindElement", ["using": "css selector", "value": css])
        case .click(let element): try call("WebDriver:ElementClick", ["id": element])
        case .clear(let element): try call("WebDriver:ElementClear", ["id": element])
        case .sendKeys(let element, let text): try call("WebDriver:ElementSendKeys", ["id": element, "text": text])
        case .screenshot: try call("WebDriver:TakeScreenshot", ["full": false, "hash": false])
        }
        // Marionette wraps a command's value as {"value": …}, as WebDriver's HTTP responses do.
        return (result as? [String: Any]).map { $0.keys.contains("value") ? $0["value"] : $0 } ?? result
    }

    private func call(_ name: String, _ parameters: [String: Any]) throws -> Any? {
        nextID += 1
        let message = try JSONSerialization.data(withJSONObject: [0, nextID, name, parameters] as [Any])
        try connection.send("\(message.count):" + String(decoding: message, as: UTF8.self))
        guard let answer = try Self.receive(connection) as? [Any], answer.count == 4, answer[1] as? Int == nextID else {
            throw WebDriver.Failure("Marionette \(name): an answer that is not [1, \(nextID), error, result]")
        }
        if let error = answer[2] as? [String: Any] {
            throw WebDriver.Failure("Marionette \(name): \(error["error"] ?? "") \(error["message"] ?? "")")
        }
        return answer[3]
    }

    private static func receive(_ connection: RawConnection) throws -> Any {
        let prefix = String(decoding: try connection.read(until: UInt8(ascii: ":")), as: UTF8.self)
        guard let length = Int(prefix) else { throw WebDriver.Failure("Marionette: bad length prefix \(prefix.debugDescription)") }
        return try JSONSerialization.jsonObject(with: Data(try connection.read(count: length)))
    }
}
