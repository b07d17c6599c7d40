/// The per-connection protocol logic, free of I/O: inputs are `mutating` calls, outputs are
/// `SessionAction`s for the runner to carry out in order (in the style of Hummingbird's
/// HTTPConnectionStateHandler). Not thread-safe by design; the runner owns it on its serial queue.
///
///     awaitingStart ──start──▶ active ──finalize──▶ finalizing ──finalizeCompleted──▶ closed
///           └──────────────── fatal error / peer closed / idle ─────────────────────▶ closed
///
/// Once `closed`, every input returns no actions.
public struct SessionStateMachine: Sendable {
    public enum State: Hashable, Sendable {
        case awaitingStart
        case active
        case finalizing
        case closed
    }

    public let config: SessionConfig
    public private(set) var state: State = .awaitingStart
    /// The session's start, once begun.
    public private(set) var start: StartRequest?
    /// Start fields from the upgrade URL's query, completed by a later `start` message.
    public private(set) var queryParameters = StartParameters()
    /// Revision of the last transcript update sent (0 before the first).
    public private(set) var transcriptRevision: UInt64 = 0
    /// Audio bytes dropped because they came before the start or after finalize.
    public private(set) var droppedAudioBytes = 0
    /// Bytes of an incomplete last sample dropped at finalize (0 for a well-formed stream).
    public private(set) var droppedTrailingBytes = 0
    /// The device the connection's credential belongs to (a device token): the start may omit
    /// `device_id` (this one is used) or must name this one. nil: the start names any device (admin).
    public private(set) var boundDeviceID: String?

    private let decoder: ClientMessageDecoder
    private var pcm: PCMFrameDecoder?
    /// Samples of the Opus packets accepted so far (encoding `opus`), counted from their TOC bytes.
    private var opusSampleCount: Int64 = 0
    /// Opus packets dropped as invalid.
    public private(set) var droppedPackets = 0
    private var opened = false
    private var began = false
    private var sawFrameSinceIdleCheck = false
    private var reportedAudioBeforeStart = false
    private var reportedAudioAfterFinalize = false
    private var storageDown = false

    public init(config: SessionConfig = .default) {
        self.config = config
        self.decoder = ClientMessageDecoder(config: config)
    }

    /// Samples received since the start (this connection only).
    public var receivedSampleCount: Int64 { pcm?.sampleCount ?? opusSampleCount }

    /// Seconds of audio received since the start; the session timeline position of the next sample is
    /// the `session` message's audio_offset_seconds plus this.
    public var receivedAudioSeconds: Double {
        guard let start else { return 0 }
        return Double(receivedSampleCount) / Double(start.sampleRate)
    }

    // MARK: connection

    /// The WebSocket was accepted. `query` holds the upgrade URL's query parameters (percent-decoded).
    ///
    /// A query with all required start fields starts the session at once. An incomplete query is kept
    /// and completed by the `start` message; a field the query gets wrong rejects the session now.
    /// `deviceID` binds the session to the device of the connection's credential (see `boundDeviceID`).
    /// `invalidTextParameters`: query parameters whose value is text that cannot be stored (the
    /// transport found NUL or bytes that are not UTF-8); one naming a start field rejects the start.
    public mutating func opened(query: [String: String], deviceID: String? = nil, invalidTextParameters: [String] = []) -> [SessionAction] {
        guard state == .awaitingStart, !opened else { return [] }
        opened = true
        boundDeviceID = deviceID
        if let field = invalidTextParameters.sorted().first(where: StartParameters.queryFieldNames.contains) {
            return fail(ProtocolError(.invalidText, "query: parameter \"\(field)\" is not UTF-8 text without NUL characters; text that PostgreSQL cannot store is refused"),
                        rejectingStart: true)
        }
        do throws(ProtocolError) {
            queryParameters = try StartParameters.fromQuery(query, config: config)
            if let deviceID {
                try Self.check(queryParameters.deviceID, boundTo: deviceID, context: "query")
                queryParameters.deviceID = deviceID
            }
            guard queryParameters.isComplete else { return [] }
            return begin(try StartRequest(completing: queryParameters, context: "query", config: config))
        } catch {
            return fail(error, rejectingStart: true)
        }
    }

    /// The peer closed the connection (or it broke).
    public mutating func peerClosed() -> [SessionAction] {
        let previous = state
        state = .closed
        // During finalizing the runner's finalize flushes everything anyway.
        return previous == .active ? [.teardown(.peerClosed)] : []
    }

    /// The runner's idle timer fired. It fires every idle interval; the session closes when no frame
    /// (of any kind, keepalive included) arrived since the previous firing, so a silent client is
    /// closed after between one and two intervals. Not applied while finalizing (the server is busy).
    public mutating func idleTimeout() -> [SessionAction] {
        guard state == .awaitingStart || state == .active else { return [] }
        if sawFrameSinceIdleCheck {
            sawFrameSinceIdleCheck = false
            return []
        }
        return fail(ProtocolError(.idleTimeout, "no message within the idle limit; send keepalive when silent"))
    }

    // MARK: frames

    public mutating func receivedText(_ text: String) -> [SessionAction] {
        guard state != .closed else { return [] }
        sawFrameSinceIdleCheck = true
        guard text.utf8.count <= config.maxTextFrameBytes else {
            return receivedTooLarge(byteCount: text.utf8.count)
        }
        let envelope: ClientMessageDecoder.Envelope
        do throws(ProtocolError) {
            envelope = try decoder.envelope(text)
        } catch {
            return fail(error)
        }
        switch (state, envelope.type) {
        case (.closed, _):
            return []
        case (_, .keepalive):
            return []
        case (.finalizing, _):
            return fail(ProtocolError(.sessionFinalized, "\(envelope.type.rawValue) after finalize is ignored"))
        case (.awaitingStart, .start):
            do throws(ProtocolError) {
                guard case .start(let request) = try decoder.decode(envelope, startDefaults: queryParameters)
                else { return [] }
                return begin(request)
            } catch {
                return fail(error, rejectingStart: true)
            }
        case (.awaitingStart, .finalize):
            // Nothing was started, so nothing needs flushing: the client is done, close normally.
            state = .closed
            return [.close(code: CloseCode.normal, reason: "finalized")]
        case (.awaitingStart, _):
            return fail(ProtocolError(.notStarted, "\(envelope.type.rawValue) before start is ignored; send start first"))
        case (.active, .start):
            return fail(ProtocolError(.alreadyStarted, "the session has already started; start is ignored"))
        case (.active, .finalize):
            state = .finalizing
            droppedTrailingBytes = pcm?.finish() ?? 0
            return [.finalize]
        case (.active, _):
            do throws(ProtocolError) {
                switch try decoder.decode(envelope) {
                case .words where start?.asr == .server:
                    return fail(ProtocolError(.asrConflict, "this session's words come from the server (asr \"server\"); words messages are dropped"))
                case .words(let words): return [.words(words)]
                case .segments(let segments): return [.segments(segments)]
                case .renameSpeaker(let speaker, let name): return [.renameSpeaker(speaker: speaker, name: name)]
                case .mergeSpeakers(let from, let into): return [.mergeSpeakers(from: from, into: into)]
                case .start, .finalize, .keepalive: return []
                }
            } catch {
                return fail(error)
            }
        }
    }

    public mutating func receivedBinary(_ bytes: [UInt8]) -> [SessionAction] {
        guard state != .closed else { return [] }
        sawFrameSinceIdleCheck = true
        guard bytes.count <= config.maxBinaryFrameBytes else {
            return receivedTooLarge(byteCount: bytes.count)
        }
        switch state {
        case .awaitingStart:
            droppedAudioBytes += bytes.count
            guard !reportedAudioBeforeStart else { return [] }
            reportedAudioBeforeStart = true
            return fail(
                ProtocolError(
                    .audioBeforeStart,
                    "audio before start is dropped (this and any further frames until the start)"))
        case .finalizing:
            droppedAudioBytes += bytes.count
            guard !reportedAudioAfterFinalize else { return [] }
            reportedAudioAfterFinalize = true
            return fail(ProtocolError(.sessionFinalized, "audio after finalize is dropped"))
        case .active where start?.encoding == .opus:
            return receivedOpusPacket(bytes)
        case .active:
            guard let samples = pcm?.decode(bytes), !samples.isEmpty else { return [] }
            return [.audio(samples: samples)]
        case .closed:
            return []
        }
    }

    /// One binary message of an `opus` session is one packet: its framing is checked and its samples
    /// counted here, so the timeline stays exact without decoding; a bad packet is dropped.
    private mutating func receivedOpusPacket(_ bytes: [UInt8]) -> [SessionAction] {
        guard let start else { return [] }
        do throws(OpusPacketError) {
            let header = try OpusPacketHeader(packet: bytes)
            let count = header.sampleCount(atRate: start.sampleRate)
            opusSampleCount += Int64(count)
            return [.encodedAudio(packet: bytes, sampleCount: count)]
        } catch {
            droppedPackets += 1
            return fail(ProtocolError(.invalidAudio, "\(error); the packet is dropped"))
        }
    }

    /// The transport refused a frame over its size limit (it was not delivered).
    public mutating func receivedTooLarge(byteCount: Int) -> [SessionAction] {
        guard state != .closed else { return [] }
        return fail(
            ProtocolError(
                .frameTooLarge,
                "a frame of \(byteCount) bytes exceeds the limit (text \(config.maxTextFrameBytes), "
                    + "binary \(config.maxBinaryFrameBytes) bytes)"))
    }

    // MARK: server side

    /// The runner finished the finalize: everything is stored and the final transcript was sent.
    public mutating func finalizeCompleted() -> [SessionAction] {
        guard state == .finalizing else { return [] }
        state = .closed
        return [.close(code: CloseCode.normal, reason: "finalized")]
    }

    /// A store write failed. Reported once per outage (non-fatal); updates go on with `stored: false`.
    public mutating func storageFailed(message: String) -> [SessionAction] {
        guard state != .closed, !storageDown else { return [] }
        storageDown = true
        return fail(ProtocolError(.storageUnavailable, message))
    }

    /// Writes succeed again; a later failure is reported again.
    public mutating func storageRecovered() {
        storageDown = false
    }

    /// The runner could not start the session it was asked to begin (the provider, storage, limits):
    /// the error rejects the start, so it is fatal and closes with its code.
    public mutating func startFailed(_ error: ProtocolError) -> [SessionAction] {
        guard state != .closed else { return [] }
        return fail(error, rejectingStart: true)
    }

    /// The server itself kept the client from sending (it paused reading): that time does not count
    /// towards the idle limit.
    public mutating func noteActivity() {
        sawFrameSinceIdleCheck = true
    }

    /// An error the server found (unknown_provider, unknown_speaker, provider_failed, internal_error…).
    /// Sends it and, when its disposition is fatal, closes.
    public mutating func failed(_ error: ProtocolError) -> [SessionAction] {
        guard state != .closed else { return [] }
        return fail(error)
    }

    /// A transcript update stamped with the next revision; nothing once the session is closed.
    public mutating func transcriptUpdate(
        upserted: [WireUtterance], removed: [String], isFinal: Bool
    ) -> [SessionAction] {
        guard state != .closed else { return [] }
        transcriptRevision += 1
        let update = TranscriptUpdate(
            revision: transcriptRevision, upserted: upserted, removed: removed, isFinal: isFinal)
        return [.send(.transcript(update))]
    }

    /// Any other server message (`session`, `speakers`); nothing once the session is closed.
    public mutating func send(_ message: ServerMessage) -> [SessionAction] {
        guard state != .closed else { return [] }
        return [.send(message)]
    }

    // MARK: helpers

    /// A device token acts only as its device: another device_id is refused, never silently replaced.
    private static func check(_ deviceID: String?, boundTo bound: String, context: String) throws(ProtocolError) {
        guard let deviceID, deviceID != bound else { return }
        throw ProtocolError(.deviceMismatch, "\(context): device_id '\(deviceID)' is not the device of this credential; omit device_id or use '\(bound)'")
    }

    private mutating func begin(_ request: StartRequest) -> [SessionAction] {
        if let boundDeviceID {
            do throws(ProtocolError) {
                try Self.check(request.deviceID, boundTo: boundDeviceID, context: "start")
            } catch {
                return fail(error, rejectingStart: true)
            }
        }
        start = request
        began = true
        pcm = request.encoding == .opus ? nil : PCMFrameDecoder(encoding: request.encoding)
        state = .active
        return [.begin(request)]
    }

    private mutating func fail(_ error: ProtocolError, rejectingStart: Bool = false) -> [SessionAction] {
        let disposition = error.code.disposition(rejectingStart: rejectingStart)
        var actions: [SessionAction] = [.send(.error(WireError(error, fatal: disposition.isFatal)))]
        if let code = disposition.closeCode {
            actions.append(.close(code: code, reason: error.code.rawValue))
            if began, state == .active || state == .finalizing {
                actions.append(.teardown(error.code == .idleTimeout ? .idleTimeout : .error(error.code)))
            }
            state = .closed
        }
        return actions
    }
}
