import ChildProcesses
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's headless Chromium through `chromedriver` (W3C WebDriver over HTTP on loopback).
final class ChromeDriverSession: BrowserSession {
    static let chromiumPath = "/usr/bin/chromium"
    static let driverPath = "/usr/bin/chromedriver"

    private let driver: Subprocess
    private let base: String
    private let session: String

    init(width: Int, height: Int, microphoneWAV: URL?) throws {
        let port = try ServerProcess.freePort()
        var configuration = Subprocess.Configuration(executable: Self.driverPath, arguments: ["--port=\(port)", "--log-level=SEVERE"])
        configuration.standardError = .inherit
        driver = try Subprocess(configuration)
        let base = "http://127.0.0.1:\(port)"
        self.base = base
        let ready = Polling.until(seconds: 30) {
            ((try? Self.call(base, "GET", "/status", nil, timeoutSeconds: 5)) as? [String: Any])?["ready"] as? Bool == true
        }
        guard ready else {
            driver.signal(SIGKILL)
            throw WebDriver.Failure("chromedriver did not become ready within 30 s")
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
            guard let id = (created as? [String: Any])?["sessionId"] as? String else {
                throw WebDriver.Failure("no sessionId in \(String(describing: created))")
            }
            session = id
        } catch {
            driver.signal(SIGKILL)
            driver.waitUntilExit()
            throw error
        }
    }

    deinit {
        _ = try? Self.call(base, "DELETE", "/session/\(session)", nil, timeoutSeconds: 10)
        // chromedriver does not always exit on SIGTERM (seen here): a test must not wait on it.
        driver.signal(SIGKILL)
        driver.waitUntilExit()
    }

    func perform(_ command: BrowserCommand) throws -> Any? {
        switch command {
        case .navigate(let url): try call("POST", "/url", ["url": url])
        case .execute(let script, let arguments): try call("POST", "/execute/sync", ["script": script, "args": arguments])
        case .find(let css): try call("POST", "/element", ["using": "css selector", "value": css])
        case .click(let element): try call("POST", "/element/\(element)/click", [:])
        case .clear(let element): try call("POST", "/element/\(element)/clear", [:])
        case .sendKeys(let element, let text): try call("POST", "/element/\(element)/value", ["text": text])
        case .screenshot: try call("GET", "/screenshot", nil)
        }
    }

    private func call(_ method: String, _ path: String, _ body: [String: Any]?) throws -> Any? {
        try Self.call(base, method, "/session/\(session)\(path)", body)
    }

    /// One WebDriver command over HTTP/1.1 on loopback; the response's `value`. A connection per
    /// command, and the body read by its Content-Length: chromedriver keeps connections open whatever
    /// the request says (so reading to end-of-stream waits forever), and corelibs' URLSession fails
    /// on its response headers ("Failed writing header").
    private static func call(_ base: String, _ method: String, _ path: String, _ body: [String: Any]?,
                             timeoutSeconds: Int = 120) throws -> Any? {
        guard let port = URLComponents(string: base)?.port else { throw WebDriver.Failure("bad base URL \(base)") }
        let payload = try body.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) } ?? ""
        let connection = try RawConnection(port: port, timeoutSeconds: timeoutSeconds)
        try connection.send("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json; charset=utf-8\r\n"
            + "Content-Length: \(payload.utf8.count)\r\nConnection: close\r\n\r\n" + payload)
        let head = try connection.readHead()
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
            throw WebDriver.Failure("WebDriver \(method) \(path): no HTTP status in \(head.debugDescription)")
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
            throw WebDriver.Failure("WebDriver \(method) \(path): \(status) \(value?["error"] ?? "") \(value?["message"] ?? "")")
        }
        return object?["value"]
    }
}
