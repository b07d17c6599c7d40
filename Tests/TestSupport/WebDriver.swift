import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's headless Chromium driven over W3C WebDriver (`chromedriver`, package chromium-driver), so
/// the console is tested in a real browser: real module loading, CSP, fetch, WebSocket and rendering.
///
/// Every method is async and does its blocking I/O on a Dispatch thread (`Blocking.run`), so a test
/// calls it from its own task and its `#expect`s stay attributed to it. Every wait is bounded and
/// returns nil when the condition never held, so a test fails with a message instead of hanging.
public final class WebDriver: @unchecked Sendable { // used by one test at a time
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    public static let chromiumPath = "/usr/bin/chromium"
    public static let driverPath = "/usr/bin/chromedriver"

    private let driver: Process
    private let base: String
    private let session: String

    /// Starts chromedriver on a free port and opens a headless Chromium session
    /// (`width`×`height` pixels, a fake microphone so getUserMedia works without hardware).
    /// `microphoneWAV`: a WAV file the fake microphone plays (looping) instead of its beep.
    public static func start(width: Int = 1400, height: Int = 1000, microphoneWAV: URL? = nil) async throws -> WebDriver {
        try await Blocking.run { try WebDriver(width: width, height: height, microphoneWAV: microphoneWAV) }
    }

    public func navigate(_ url: String) async throws {
        try await Blocking.run { try self.navigateNow(url) }
    }

    @discardableResult
    public func execute(_ script: String, _ arguments: [String] = []) async throws -> Any? {
        try await Blocking.run { SendableBox(try self.executeNow(script, arguments)) }.value
    }

    public func waitFor(_ script: String, seconds: Double, _ arguments: [String] = []) async -> Any? {
        (try? await Blocking.run { SendableBox(self.waitForNow(script, seconds: seconds, arguments)) })?.value
    }

    public func click(_ css: String) async throws {
        try await Blocking.run { try self.clickNow(css) }
    }

    public func type(_ css: String, _ text: String) async throws {
        try await Blocking.run { try self.typeNow(css, text) }
    }

    public func screenshot() async throws -> Data {
        try await Blocking.run { try self.screenshotNow() }
    }

    private init(width: Int, height: Int, microphoneWAV: URL?) throws {
        for path in [Self.chromiumPath, Self.driverPath] where !FileManager.default.isExecutableFile(atPath: path) {
            throw Failure("\(path) is missing: scripts/setup installs Debian's chromium and chromium-driver")
        }
        let port = try ServerProcess.freePort()
        driver = Process()
        driver.executableURL = URL(fileURLWithPath: Self.driverPath)
        driver.arguments = ["--port=\(port)", "--log-level=SEVERE"]
        driver.standardOutput = FileHandle.nullDevice
        try driver.run()
        let base = "http://127.0.0.1:\(port)"
        self.base = base
        let ready = Polling.until(seconds: 30) {
            ((try? Self.call(base, "GET", "/status", nil, timeoutSeconds: 5)) as? [String: Any])?["ready"] as? Bool == true
        }
        guard ready else {
            driver.terminate()
            throw Failure("chromedriver did not become ready within 30 s")
        }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": [
                "binary": Self.chromiumPath,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=\(width),\(height)",
                         "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]
                    + (microphoneWAV.map { ["--use-file-for-fake-audio-capture=\($0.path)"] } ?? []),
            ],
        ]]]
        do {
            let created = try Self.call(base, "POST", "/session", capabilities)
            guard let id = (created as? [String: Any])?["sessionId"] as? String else { throw Failure("no sessionId in \(String(describing: created))") }
            session = id
        } catch {
            driver.terminate()
            throw error
        }
    }

    deinit {
        _ = try? Self.call(base, "DELETE", "/session/\(session)", nil, timeoutSeconds: 10)
        // chromedriver does not always exit on SIGTERM (seen here): a test must not wait on it.
        kill(driver.processIdentifier, SIGKILL)
        driver.waitUntilExit()
    }

    private func navigateNow(_ url: String) throws {
        _ = try command("POST", "/url", ["url": url])
    }

    /// Runs `script` (a function body; `arguments[i]` are `arguments`) in the page; its return value.
    private func executeNow(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "/execute/sync", ["script": script, "args": arguments])
    }

    /// Polls `script` every 100 ms until it returns something truthy (not null/false/0/""), at most
    /// `seconds`; the last value, or nil if it never held.
    private func waitForNow(_ script: String, seconds: Double, _ arguments: [Any] = []) -> Any? {
        var value: Any?
        let held = Polling.until(seconds: seconds) {
            value = try? executeNow(script, arguments)
            switch value {
            case nil, is NSNull: return false
            case let flag as Bool: return flag
            case let number as NSNumber: return number.doubleValue != 0
            case let text as String: return !text.isEmpty
            default: return true
            }
        }
        return held ? value : nil
    }

    /// A WebDriver element click on the first element matching `css` (a real pointer event, unlike
    /// `element.click()` in a script: the element must be visible and not covered).
    private func clickNow(_ css: String) throws {
        // The page re-renders lists as data arrives: an element found a moment ago may have been
        // replaced by its successor, which is the one to click (at most three tries).
        for attempt in 1...3 {
            do {
                _ = try command("POST", "/element/\(try find(css))/click", [:])
                return
            } catch let failure as Failure where failure.description.contains("stale element reference") && attempt < 3 {
                continue
            }
        }
    }

    /// Types `text` into the first element matching `css` after clearing it.
    private func typeNow(_ css: String, _ text: String) throws {
        let element = try find(css)
        _ = try command("POST", "/element/\(element)/clear", [:])
        _ = try command("POST", "/element/\(element)/value", ["text": text])
    }

    /// The page as a PNG.
    private func screenshotNow() throws -> Data {
        guard let encoded = try command("GET", "/screenshot", nil) as? String, let data = Data(base64Encoded: encoded) else {
            throw Failure("the screenshot was not base64 PNG")
        }
        return data
    }

    private func find(_ css: String) throws -> String {
        let found = try command("POST", "/element", ["using": "css selector", "value": css])
        // W3C element reference key.
        guard let element = (found as? [String: Any])?["element-6066-11e4-a52e-4f735466cecf"] as? String else {
            throw Failure("no element matches \(css)")
        }
        return element
    }

    private func command(_ method: String, _ path: String, _ body: [String: Any]?) throws -> Any? {
        try Self.call(base, method, "/session/\(session)\(path)", body)
    }

    /// One WebDriver command over HTTP/1.1 on loopback; the response's `value`. A connection per
    /// command, and the body read by its Content-Length: chromedriver keeps connections open whatever
    /// the request says (so reading to end-of-stream waits forever), and corelibs' URLSession fails
    /// on its response headers ("Failed writing header").
    private static func call(_ base: String, _ method: String, _ path: String, _ body: [String: Any]?,
                             timeoutSeconds: Int = 120) throws -> Any? {
        guard let port = URLComponents(string: base)?.port else { throw Failure("bad base URL \(base)") }
        let payload = try body.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) } ?? ""
        let connection = try RawConnection(port: port, timeoutSeconds: timeoutSeconds)
        try connection.send("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json; charset=utf-8\r\n"
            + "Content-Length: \(payload.utf8.count)\r\nConnection: close\r\n\r\n" + payload)
        let head = try connection.readHead()
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
            throw Failure("WebDriver \(method) \(path): no HTTP status in \(head.debugDescription)")
        }
        let length = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first ?? 0
        let bytes = try connection.read(count: length)
        let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        if status >= 400 {
            let value = object?["value"] as? [String: Any]
            throw Failure("WebDriver \(method) \(path): \(status) \(value?["error"] ?? "") \(value?["message"] ?? "")")
        }
        return object?["value"]
    }
}

/// A JSON value from the page (strings, numbers, arrays, dictionaries: immutable once decoded)
/// carried across the Dispatch hop.
private struct SendableBox: @unchecked Sendable {
    let value: Any?
    init(_ value: Any?) { self.value = value }
}
