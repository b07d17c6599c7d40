import Testing
import TestSupport
@testable import WebSocketTransport

/// Autobahn's cases 5: fragmented messages, control frames between fragments, continuations with
/// nothing to continue, and control frames that must not be fragmented.
@Suite("RFC 6455 fragmentation (Autobahn 5)")
struct AutobahnFragmentationTests {
    typealias Case = AutobahnCase
    static let protocolError: Set<UInt16?> = [1002]

    static let cases: [Case] = {
        let fragments: [RawFrame] = [.text("fragment1", fin: false), .continuation("fragment2")]
        let withPing: [RawFrame] = [.text("fragment1", fin: false), .ping(Array("ping payload".utf8)), .continuation("fragment2")]
        let echoWithPing: [WebSocketEvent] = [.pong(Array("ping payload".utf8)), .text("fragment1fragment2")]
        let orphan: [RawFrame] = [.continuation("non-continuation payload"), .text("Hello, world!")]
        let orphanOpen: [RawFrame] = [.continuation("non-continuation payload", fin: false), .text("Hello, world!")]
        let twice: (Bool) -> [RawFrame] = { fin in
            [.continuation("fragment1", fin: fin), .text("fragment2", fin: false), .continuation("fragment3")]
        }
        let five = (1...5).map { "fragment\($0)" }
        let part1: [RawFrame] = [.text(five[0], fin: false), .continuation(five[1], fin: false), .ping(Array("pongme 1!".utf8))]
        let part2: [RawFrame] = [.continuation(five[2], fin: false), .continuation(five[3], fin: false), .ping(Array("pongme 2!".utf8)),
                                 .continuation(five[4])]
        let fiveEvents: [WebSocketEvent] = [.pong(Array("pongme 1!".utf8)), .pong(Array("pongme 2!".utf8)), .text(five.joined())]
        return [
            // Control frames must not be fragmented.
            Case("5.1", [.send([.ping(Array("fragment1".utf8), fin: false), .continuation("fragment2")])], close: protocolError),
            Case("5.2", [.send([.pong(Array("fragment1".utf8), fin: false), .continuation("fragment2")])], close: protocolError),
            // A text message in two fragments, sent in one chop, frame by frame, octet by octet.
            Case.ok("5.3", [.send(fragments)], [.text("fragment1fragment2")]),
            Case.ok("5.4", [.sendFramewise(fragments)], [.text("fragment1fragment2")]),
            Case.ok("5.5", [.sendOctetwise(fragments)], [.text("fragment1fragment2")]),
            // A ping between the fragments is answered before the message completes.
            Case.ok("5.6", [.send(withPing)], echoWithPing),
            Case.ok("5.7", [.sendFramewise(withPing)], echoWithPing),
            Case.ok("5.8", [.sendOctetwise(withPing)], echoWithPing),
            // Continuations with nothing to continue.
            Case("5.9", [.send(orphan)], close: protocolError),
            Case("5.10", [.sendFramewise(orphan)], close: protocolError),
            Case("5.11", [.sendOctetwise(orphan)], close: protocolError),
            Case("5.12", [.send(orphanOpen)], close: protocolError),
            Case("5.13", [.sendFramewise(orphanOpen)], close: protocolError),
            Case("5.14", [.sendOctetwise(orphanOpen)], close: protocolError),
            // A complete message, then an orphan continuation. The echo is written or not depending on
            // whether the failure is seen before the next write; either is correct, nothing after the close is.
            Case("5.15", [.send([.text("fragment1", fin: false), .continuation("fragment2"), .continuation("fragment3", fin: false),
                                 .text("fragment4")])],
                 before: [.text("fragment1fragment2")], orBefore: [[]], close: protocolError),
            Case("5.16", [.send(twice(false) + twice(false))], close: protocolError),
            Case("5.17", [.send(twice(true) + twice(true))], close: protocolError),
            // A second text frame where a continuation must come.
            Case("5.18", [.send([.text("fragment1", fin: false), .text("fragment2")])], close: protocolError),
            // Pings between five fragments, with a pause: the first pong comes before the message ends.
            Case.ok("5.19", [.send(part1), .awaitEvents(1), .pause(milliseconds: 200), .send(part2)], fiveEvents),
            Case.ok("5.20", [.sendFramewise(part1), .awaitEvents(1), .pause(milliseconds: 200), .sendFramewise(part2)], fiveEvents),
        ]
    }()

    @Test(arguments: cases) func handlesFragmentsAndFailsBrokenSequences(_ testCase: Case) async throws {
        try await testCase.check()
    }
}
