import Foundation
import SpeakerSyncClient
import SpeakerSyncKit
import Synchronization

/// What every SpeakerSyncKit device of a fleet run did, and when (the harness's clock): the
/// meetings it began, its connections dropping, each new session, each update carrying a stored
/// word, its end. Takeover times are read from it.
final class FleetTimeline: Sendable {
    enum Kind: Sendable, Equatable {
        case began
        /// The connection dropped (the kit is resuming or offline).
        case dropped
        /// A `session` message: a connection (re)started the conversation.
        case session
        /// A transcript update with at least one word `stored: true`.
        case stored
        /// The session ended (finalized, or the kit gave up).
        case ended(finalized: Bool)
    }

    struct Event: Sendable {
        var at: ContinuousClock.Instant
        var kind: Kind
    }

    private struct State {
        var current: [String: String] = [:]     // device → its conversation now
        var events: [String: [Event]] = [:]     // conversation → what happened, in order
    }

    private let state = Mutex(State())

    func record(_ event: FaultDeviceEvent) {
        let now = ContinuousClock.now
        switch event {
        case .began(let device, let conversation):
            state.withLock {
                $0.current[device] = conversation
                $0.events[conversation, default: []].append(Event(at: now, kind: .began))
            }
        case .state(_, let conversation, let connection):
            let kind: Kind? = switch connection {
            case .resuming, .offline: .dropped
            case .finished(let outcome): .ended(finalized: outcome == .finalized)
            default: nil
            }
            if let kind { state.withLock { $0.events[conversation, default: []].append(Event(at: now, kind: kind)) } }
        case .message(_, let conversation, let text):
            // The encoder writes `type` first; only these two matter here.
            let kind: Kind? = if text.hasPrefix(#"{"type":"session""#) {
                .session
            } else if text.hasPrefix(#"{"type":"transcript""#), text.contains(#""stored":true"#) {
                .stored
            } else {
                nil
            }
            if let kind { state.withLock { $0.events[conversation, default: []].append(Event(at: now, kind: kind)) } }
        }
    }

    func conversation(of device: String) -> String? { state.withLock { $0.current[device] } }

    func events(of conversation: String) -> [Event] { state.withLock { $0.events[conversation] ?? [] } }

    /// How a conversation on a server hit at `at` came through: streaming again (the first stored
    /// word on a new connection, seconds after `at`), finished before it had to move, or not moved.
    func takeover(of conversation: String, after at: ContinuousClock.Instant) -> FleetTakeover.Outcome {
        let later = events(of: conversation).filter { $0.at >= at }
        let dropped = later.contains { $0.kind == .dropped }
        guard let session = later.first(where: { $0.kind == .session }) else {
            if !dropped, later.contains(where: { if case .ended = $0.kind { true } else { false } }) { return .finishedFirst }
            return .notMoved(dropped ? "its connection dropped but no new session started" : "its connection never dropped")
        }
        guard let stored = later.first(where: { $0.kind == .stored && $0.at >= session.at }) else {
            return .notMoved("a new session started but stored nothing")
        }
        return .moved(seconds: (stored.at - at).seconds)
    }
}

/// The takeovers of one fault: the devices that were on the server when it was hit.
public struct FleetTakeover: Sendable {
    public enum Outcome: Sendable, Equatable {
        case moved(seconds: Double)
        /// The meeting ended (finalized on the old connection) before it had to move.
        case finishedFirst
        case notMoved(String)
    }

    public var fault: FleetFault
    public var server: String
    public var device: String
    public var conversationID: String
    public var outcome: Outcome
}

/// Nearest-rank percentile of `values` (p in 0…100); nil when empty.
func percentile(_ values: [Double], _ p: Double) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count - 1, max(0, rank - 1))]
}
