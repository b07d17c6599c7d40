import Foundation
import Logging
import SessionProtocol
import TranscriptMerge
import WebSocketTransport

/// How the in-process device streams: what `speakersync eval` does for a test recording's meeting.
struct InProcessDeviceConfig: Sendable {
    /// Multiple of real time the audio is sent at.
    var speed: Double
    /// Audio per binary frame: a phone's 100 ms buffers.
    var chunkSeconds: Double
    /// Send each ASR result first as volatile, then final, as SpeechAnalyzer does.
    var volatileResults: Bool
    /// The session must answer the start within this long.
    var startTimeoutSeconds: Double
    /// After `finalize`, the final transcript and the close must come within this long.
    var finalizeTimeoutSeconds: Double

    init(speed: Double = 1, chunkSeconds: Double = 0.1, volatileResults: Bool = true, startTimeoutSeconds: Double = 60,
         finalizeTimeoutSeconds: Double = 600) {
        self.speed = speed
        self.chunkSeconds = chunkSeconds
        self.volatileResults = volatileResults
        self.startTimeoutSeconds = startTimeoutSeconds
        self.finalizeTimeoutSeconds = finalizeTimeoutSeconds
    }

    static let `default` = InProcessDeviceConfig()
}

/// Why an in-process session produced nothing to score; `code` is stable.
struct InProcessDeviceError: Error, CustomStringConvertible, Sendable {
    enum Code: String, Sendable {
        /// The session was not opened (the handshake's checks: credential, rate, connections, server state).
        case refused
        case startTimedOut = "start_timed_out"
        /// The session ended before its final transcript (an error, the server stopping, a revoked credential).
        case sessionEnded = "session_ended"
        case finalizeTimedOut = "finalize_timed_out"
    }

    var code: Code
    var message: String
    var description: String { "\(code.rawValue): \(message)" }
}

/// What the device holds once its session finalized.
struct InProcessDeviceRun: Sendable {
    var conversationID: String
    /// The transcript's words at the end, with the speakers they got.
    var words: [WireWord]
    var stats: SessionStats
    /// The server's `error` messages (non-fatal ones; a fatal one ends the run with an error).
    var errors: [WireError]
}

/// A device that lives in this process: streams a meeting through a real session of this server as a
/// phone would (a `start`, 16-bit PCM in 100 ms frames paced at `speed`, each ASR result once its
/// audio has been sent plus the recogniser's delay, device turns for provider `device`, then
/// `finalize`), through `SessionManager` and a `LoopbackSessionTransport` instead of a socket, and
/// keeps what the session sends back. The session is the one a device gets (its provider, merge,
/// store and stats), so the figures scored are a device's.
struct InProcessDevice: Sendable {
    var config: InProcessDeviceConfig
    let sessions: SessionManager
    /// Who asked: the session acts as this principal, as a socket presenting its credential would.
    let principal: Principal
    /// Where the request came from (the rate limit's key when access control is off).
    let address: String?
    let logger: Logger

    private let encoder = ClientMessageEncoder()

    init(config: InProcessDeviceConfig, sessions: SessionManager, principal: Principal, address: String?, logger: Logger) {
        self.config = config
        self.sessions = sessions
        self.principal = principal
        self.address = address
        self.logger = logger
    }

    /// Streams `meeting` under `start` (its sample rate and encoding must be the meeting's and 16-bit
    /// PCM); `segments`: the device's own turns, for provider `device`.
    func stream(_ meeting: TestMeeting, start: StartRequest, segments: [DeviceSegment] = []) async throws(InProcessDeviceError) -> InProcessDeviceRun {
        let inbox = DeviceInbox(logger: logger)
        let connection = SessionManager.makeInProcessConnectionID()
        let transport = LoopbackSessionTransport(connection: connection, sessions: sessions, inbox: inbox)
        if case .refuse(let status, let code, let message, _) = sessions.openInProcess(connection, principal: principal, address: address,
                                                                                       transport: transport) {
            throw InProcessDeviceError(code: .refused, message: "\(status) \(code): \(message)")
        }
        do {
            return try await run(meeting, start: start, segments: segments, transport: transport, inbox: inbox)
        } catch {
            // Whatever went wrong, the session must not wait for a device that is gone.
            transport.hangUp(code: CloseCode.goingAway, reason: "the test recording stopped")
            throw error
        }
    }

    private func run(_ meeting: TestMeeting, start: StartRequest, segments: [DeviceSegment], transport: LoopbackSessionTransport,
                     inbox: DeviceInbox) async throws(InProcessDeviceError) -> InProcessDeviceRun {
        _ = await transport.deliver(.text(encoder.encode(.start(start))))
        let info = try await waitStarted(inbox)

        let sampleRate = meeting.audio.sampleRate
        let chunk = max(1, Int(config.chunkSeconds * Double(sampleRate)))
        let results = ASRResult.schedule(meeting.words, volatile: config.volatileResults)
        let turns = segments.sorted { $0.endSeconds < $1.endSeconds }
        var nextResult = 0
        var nextTurn = 0
        var offset = 0
        let began = ContinuousClock.now
        let samples = meeting.audio.samples
        while offset < samples.count || nextResult < results.count || nextTurn < turns.count {
            if transport.isClosed { break }
            if offset < samples.count {
                let end = min(samples.count, offset + chunk)
                _ = await transport.deliver(.binary(Self.pcm16(samples[offset ..< end])))
                offset = end
            }
            // Once the last frame is out, everything still held goes.
            let sentSeconds = offset >= samples.count ? Double.infinity : Double(offset) / Double(sampleRate)
            var batch: [DeviceSegment] = []
            while nextTurn < turns.count, turns[nextTurn].endSeconds <= sentSeconds {
                batch.append(turns[nextTurn])
                nextTurn += 1
            }
            if !batch.isEmpty { _ = await transport.deliver(.text(encoder.encode(.segments(batch)))) }
            while nextResult < results.count, results[nextResult].availableAtSeconds <= sentSeconds {
                _ = await transport.deliver(.text(encoder.encode(.words(results[nextResult].message))))
                nextResult += 1
            }
            if offset < samples.count {
                let due = began + .seconds(Double(offset) / Double(sampleRate) / config.speed)
                do { try await Task.sleep(until: due, clock: .continuous) } catch {
                    throw InProcessDeviceError(code: .sessionEnded, message: "cancelled")
                }
            }
        }
        _ = await transport.deliver(.text(encoder.encode(.finalize)))
        let state = try await waitClosed(inbox)
        guard let stats = state.stats, state.close?.code == CloseCode.normal else {
            let close = state.close.map { "close code \($0.code.map(String.init) ?? "none"): \($0.reason)" } ?? "not closed"
            let errors = state.errorSummary
            throw InProcessDeviceError(code: .sessionEnded, message: "the session ended without its final transcript (\(close))"
                                       + (errors.isEmpty ? "" : " (server errors: \(errors))"))
        }
        return InProcessDeviceRun(conversationID: info.conversationID, words: state.words, stats: stats, errors: state.errors)
    }

    /// Waits for the `session` message, or the reason there will be none.
    private func waitStarted(_ inbox: DeviceInbox) async throws(InProcessDeviceError) -> SessionInfo {
        let deadline = ContinuousClock.now + .seconds(config.startTimeoutSeconds)
        while true {
            // Checked once more after the deadline: a task starved past it must not call a session
            // that started meanwhile a timeout.
            let pastDeadline = ContinuousClock.now >= deadline
            let state = inbox.current
            if let info = state.session { return info }
            if let close = state.close {
                let errors = state.errorSummary
                throw InProcessDeviceError(code: .sessionEnded, message: "the session was refused (close code \(close.code.map(String.init) ?? "none"))"
                                           + (errors.isEmpty ? "" : ": \(errors)"))
            }
            if pastDeadline {
                throw InProcessDeviceError(code: .startTimedOut, message: "the session did not start within \(Int(config.startTimeoutSeconds)) s")
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits for the session to close the connection after `finalize` (behind its stats and final transcript).
    private func waitClosed(_ inbox: DeviceInbox) async throws(InProcessDeviceError) -> DeviceInbox.State {
        let deadline = ContinuousClock.now + .seconds(config.finalizeTimeoutSeconds)
        while true {
            let pastDeadline = ContinuousClock.now >= deadline
            let state = inbox.current
            if state.close != nil { return state }
            if pastDeadline {
                throw InProcessDeviceError(code: .finalizeTimedOut, message: "no final transcript within \(Int(config.finalizeTimeoutSeconds)) s")
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// 16-bit little-endian PCM as a device encodes it (SpeakerSyncKit's `PCMEncoding`: clipped to
    /// ±1, scaled by 32767, rounded), so the session gets the bytes `speakersync eval` sends.
    static func pcm16(_ samples: ArraySlice<Float>) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * 2)
        for sample in samples {
            let clipped = max(-1, min(1, sample.isFinite ? sample : 0))
            let bits = UInt16(bitPattern: Int16((clipped * 32767).rounded()))
            bytes.append(UInt8(bits & 0xff))
            bytes.append(UInt8(bits >> 8))
        }
        return bytes
    }
}
