import Testing
@testable import SpeakerSyncClient

/// One URL form for every client command: whichever form names the server, the WebSocket and HTTP
/// URLs derived from it are the same; an unknown path is kept so the server's 404 can say so.
struct ServerURLTests {
    @Test(arguments: [
        "http://127.0.0.1:8080", "http://127.0.0.1:8080/", "ws://127.0.0.1:8080", "ws://127.0.0.1:8080/v1/listen",
        "ws://127.0.0.1:8080/v1/listen/", "http://127.0.0.1:8080/v1/listen", "127.0.0.1:8080", "WS://127.0.0.1:8080",
    ])
    func everyFormOfAPlaintextServerGivesTheSameURLs(_ text: String) throws {
        let url = try ServerURL(text)
        #expect(!url.isSecure)
        #expect(url.webSocketURL == "ws://127.0.0.1:8080/v1/listen")
        #expect(url.webSocketBase == "ws://127.0.0.1:8080")
        #expect(url.httpBase == "http://127.0.0.1:8080")
        #expect(url.http("/v1/conversations?limit=1") == "http://127.0.0.1:8080/v1/conversations?limit=1")
    }

    @Test(arguments: ["https://speakersync.example:8443", "wss://speakersync.example:8443/v1/listen", "wss://speakersync.example:8443/"])
    func tlsFormsGiveWssAndHttps(_ text: String) throws {
        let url = try ServerURL(text)
        #expect(url.isSecure)
        #expect(url.webSocketURL == "wss://speakersync.example:8443/v1/listen")
        #expect(url.httpBase == "https://speakersync.example:8443")
    }

    @Test func aHostWithoutAPortKeepsTheSchemesDefaultPort() throws {
        let url = try ServerURL("https://speakersync.example")
        #expect(url.webSocketURL == "wss://speakersync.example/v1/listen")
        #expect(url.httpBase == "https://speakersync.example")
    }

    @Test func anIPv6HostKeepsItsBrackets() throws {
        let url = try ServerURL("ws://[::1]:8080/v1/listen")
        #expect(url.webSocketURL == "ws://[::1]:8080/v1/listen")
        #expect(url.httpBase == "http://[::1]:8080")
    }

    /// Behind a reverse proxy that serves the server under a path, the path is the prefix of every route.
    @Test func aPrefixBeforeV1ListenIsKeptForBoth() throws {
        let url = try ServerURL("wss://proxy.example/speakersync/v1/listen")
        #expect(url.webSocketURL == "wss://proxy.example/speakersync/v1/listen")
        #expect(url.webSocketBase == "wss://proxy.example/speakersync")
        #expect(url.httpBase == "https://proxy.example/speakersync")
    }

    /// A mistyped path is not corrected: the session goes to it and the server's 404 ends it at once.
    @Test func anUnknownPathIsKeptAsGiven() throws {
        let url = try ServerURL("ws://127.0.0.1:8080/v1/lisen")
        #expect(url.webSocketURL == "ws://127.0.0.1:8080/v1/lisen")
        #expect(url.httpBase == "http://127.0.0.1:8080/v1/lisen")
    }

    @Test func aQueryStaysOnTheWebSocketURLOnly() throws {
        let url = try ServerURL("ws://127.0.0.1:8080/v1/listen?trace=1")
        #expect(url.webSocketURL == "ws://127.0.0.1:8080/v1/listen?trace=1")
        #expect(url.httpBase == "http://127.0.0.1:8080")
    }

    @Test(arguments: [
        ("ftp://127.0.0.1:8080", "scheme ftp://"), ("http://", "no host"), ("http://127.0.0.1:8080/#top", "fragment"),
        ("http://user:secret@127.0.0.1:8080", "--token"),
    ])
    func whatIsNotAServerURLIsRefusedWithTheReason(_ text: String, _ reason: String) {
        #expect {
            try ServerURL(text)
        } throws: { error in
            let description = "\(error)"
            return description.contains(reason) && description.contains("http(s)://host:port or ws(s)://host:port")
        }
    }
}
