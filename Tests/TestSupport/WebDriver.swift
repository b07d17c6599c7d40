import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real browser driven from a test, so the console is tested as users meet it: real module loading,
/// CSP, fetch, WebSocket, AudioWorklet and rendering. Two browsers behind one interface: Debian's
/// Chromium over W3C WebDriver (`chromedriver`, package chromium-driver) and Debian's Firefox ESR over
/// Marionette, the protocol Firefox speaks itself (Debian has no geckodriver; Marionette's commands are
/// WebDriver's, so the test is the same).
///
/// Every method is async and does its blocking I/O on a Dispatch thread (`Blocking.run`), so a test
/// calls it from its own task and its `#expect`s stay attributed to it. Every wait is bounded and
/// returns nil when the condition never held, so a test fails with a message instead of hanging.
public final class WebDriver: @unchecked Sendable { // used by one test at a time
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    public enum Browser: String, Sendable, CaseIterable, CustomStringConvertible {
        case chromium, firefox
        public var description: String { rawValue }
        /// The executable that must exist for this browser to be driven.
        public var requiredPaths: [String] {
            switch self {
            case .chromium: [ChromeDriverSession.chromiumPath, ChromeDriverSession.driverPath]
            case .firefox: [MarionetteSession.firefoxPath]
            }
        }
    }

    public let browser: Browser
    private let session: any BrowserSession

    /// Starts a headless browser (`width`×`height` pixels, a fake microphone so getUserMedia works
    /// without hardware). `microphoneWAV` (Chromium only): a WAV file the fake microphone plays,
    /// looping, instead of its beep; Firefox's fake microphone is a tone.
    public static func start(_ browser: Browser = .chromium, width: Int = 1400, height: Int = 1000,
                             microphoneWAV: URL? = nil) async throws -> WebDriver {
        try await Blocking.run {
            for path in browser.requiredPaths where !FileManager.default.isExecutableFile(atPath: path) {
                throw Failure("\(path) is missing: scripts/setup installs Debian's chromium, chromium-driver and firefox-esr")
            }
            let session: any BrowserSession = switch browser {
            case .chromium: try ChromeDriverSession(width: width, height: height, microphoneWAV: microphoneWAV)
            case .firefox: try MarionetteSession(width: width, height: height)
            }
            return WebDriver(browser: browser, session: session)
        }
    }

    private init(browser: Browser, session: any BrowserSession) {
        self.browser = browser
        self.session = session
    }

    public func navigate(_ url: String) async throws {
        try await Blocking.run { _ = try self.session.perform(.navigate(url: url)) }
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

    /// The page as a PNG.
    public func screenshot() async throws -> Data {
        try await Blocking.run {
            guard let encoded = try self.session.perform(.screenshot) as? String, let data = Data(base64Encoded: encoded) else {
                throw Failure("the screenshot was not base64 PNG")
            }
            return data
        }
    }

    /// Runs `script` (a function body; `arguments[i]` are `arguments`) in the page; its return value.
    private func executeNow(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try session.perform(.execute(script: script, arguments: arguments))
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
                _ = try session.perform(.click(element: try find(css)))
                return
            } catch let failure as Failure where failure.description.contains("stale element reference") && attempt < 3 {
                continue
            }
        }
    }

    /// Types `text` into the first element matching `css` after clearing it.
    private func typeNow(_ css: String, _ text: String) throws {
        let element = try find(css)
        _ = try session.perform(.clear(element: element))
        _ = try session.perform(.sendKeys(element: element, text: text))
    }

    private func find(_ css: String) throws -> String {
        let found = try session.perform(.find(css: css))
        // W3C element reference key.
        guard let element = (found as? [String: Any])?["element-6066-11e4-a52e-4f735466cecf"] as? String else {
            throw Failure("no element matches \(css)")
        }
        return element
    }
}

/// One WebDriver command, as both protocols know it.
enum BrowserCommand {
    case navigate(url: String)
    case execute(script: String, arguments: [Any])
    case find(css: String)
    case click(element: String)
    case clear(element: String)
    case sendKeys(element: String, text: String)
    case screenshot
}

/// A running browser that performs commands (blocking) and returns their WebDriver `value`; it quits
/// the browser when released.
protocol BrowserSession: AnyObject {
    func perform(_ command: BrowserCommand) throws -> Any?
}

/// A JSON value from the page (strings, numbers, arrays, dictionaries: immutable once decoded)
/// carried across the Dispatch hop.
private struct SendableBox: @unchecked Sendable {
    let value: Any?
    init(_ value: Any?) { self.value = value }
}
