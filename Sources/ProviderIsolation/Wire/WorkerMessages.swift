import ProviderInterface

/// The frames between the server and a provider worker over their socket pair.
///
/// A frame is a little-endian `UInt32` payload length, then the payload: one kind byte and the
/// kind's fields (`WireWriter`). Requests go server → worker, replies worker → server, in order per
/// instance: the worker runs each instance's requests one at a time, in the order sent, and replies
/// in that order, so the server matches a reply to the oldest request outstanding for its instance.
public enum WorkerProtocol {
    /// Bumped whenever a frame changes. The server passes it to the worker, which refuses another.
    public static let version: UInt32 = 4
    /// The largest frame either side accepts (an enrolment recording of 10 minutes is 38 MB of floats).
    public static let maximumFrameBytes = 64 << 20
}

/// What the server asks of a worker.
enum WorkerRequest: Equatable, Sendable {
    /// Create an instance (check_options first, then create); reply `.created` or `.createFailed`. The
    /// server may send the instance's pushes right behind it: they run once create has.
    case create(CreateRequest)
    /// Push samples, then pull every pending turn; reply `.processed` or `.instanceFailed`.
    /// `arrivedSeconds`: when the server had the audio (CLOCK_MONOTONIC, which both processes share),
    /// so the worker knows how long it waited in every queue on the way (the plugins' backlog).
    case push(instance: UInt64, samples: [Float], arrivedSeconds: Double)
    /// Finalize, pull the last turns and every speaker profile; reply `.finalized` or `.instanceFailed`.
    case finalize(instance: UInt64)
    /// Destroy the instance; no reply.
    case destroy(instance: UInt64)
    /// The factory's check_options; reply `.answered` with no floats.
    case checkOptions(request: UInt64, providerID: String, optionsJSON: String)
    /// The factory's embed_voice; reply `.answered` with the embedding.
    case embedVoice(request: UInt64, providerID: String, samples: [Float])
    /// The answer to `.configurationWanted`, before the worker's `.ready`: the provider config
    /// sections of the providers the worker's plugin declared (provider id → JSON object text), and
    /// no other; empty when the server has none for them.
    case configure(sections: [String: String])

    struct CreateRequest: Equatable, Sendable {
        var instance: UInt64
        var providerID: String
        var sessionID: String
        var sampleRate: Int
        var optionsJSON: String
        var knownSpeakers: [KnownSpeaker]
    }

    private enum Kind: UInt8 {
        case create = 1, push, finalize, destroy, checkOptions, embedVoice, configure
    }

    /// The whole frame, length prefix included.
    func encoded() -> [UInt8] {
        var writer = WireWriter(capacity: 64)
        writer.u32(0)
        switch self {
        case .create(let request):
            writer.u8(Kind.create.rawValue)
            writer.u64(request.instance)
            writer.string(request.providerID)
            writer.string(request.sessionID)
            writer.u32(UInt32(clamping: request.sampleRate))
            writer.string(request.optionsJSON)
            writer.u32(UInt32(request.knownSpeakers.count))
            for known in request.knownSpeakers {
                writer.i32(known.speaker)
                writer.bool(known.isPermanent)
                writer.optionalString(known.name)
                writer.f64(known.profile.durationSeconds)
                writer.floats(known.profile.embedding)
            }
        case .push(let instance, let samples, let arrivedSeconds):
            return samples.withUnsafeBufferPointer { Self.pushFrame(instance: instance, samples: $0, arrivedSeconds: arrivedSeconds) }
        case .finalize(let instance):
            writer.u8(Kind.finalize.rawValue)
            writer.u64(instance)
        case .destroy(let instance):
            writer.u8(Kind.destroy.rawValue)
            writer.u64(instance)
        case .checkOptions(let request, let providerID, let optionsJSON):
            writer.u8(Kind.checkOptions.rawValue)
            writer.u64(request)
            writer.string(providerID)
            writer.string(optionsJSON)
        case .embedVoice(let request, let providerID, let samples):
            writer.u8(Kind.embedVoice.rawValue)
            writer.u64(request)
            writer.string(providerID)
            writer.floats(samples)
        case .configure(let sections):
            writer.u8(Kind.configure.rawValue)
            writer.u32(UInt32(sections.count))
            for (id, section) in sections.sorted(by: { $0.key < $1.key }) {
                writer.string(id)
                writer.string(section)
            }
        }
        return Framing.sealed(writer.bytes)
    }

    /// A push frame straight from the caller's samples: the one copy audio makes on the server's side.
    static func pushFrame(instance: UInt64, samples: UnsafeBufferPointer<Float>, arrivedSeconds: Double) -> [UInt8] {
        var writer = WireWriter(capacity: 25 + samples.count * 4)
        writer.u32(0)
        writer.u8(Kind.push.rawValue)
        writer.u64(instance)
        writer.floats(samples)
        writer.f64(arrivedSeconds)
        return Framing.sealed(writer.bytes)
    }

    /// Decodes one payload (without its length prefix).
    static func decode(_ payload: UnsafeRawBufferPointer) throws(WireError) -> WorkerRequest {
        var reader = WireReader(payload)
        let byte = try reader.u8()
        guard let kind = Kind(rawValue: byte) else { throw WireError("unknown request kind \(byte)") }
        let request: WorkerRequest
        switch kind {
        case .create:
            let instance = try reader.u64()
            let providerID = try reader.string()
            let sessionID = try reader.string()
            let sampleRate = Int(try reader.u32())
            let options = try reader.string()
            let count = try reader.count(minimumElementSize: 18, "known speakers")
            var known: [KnownSpeaker] = []
            for _ in 0 ..< count {
                let speaker = try reader.i32()
                let permanent = try reader.bool()
                let name = try reader.optionalString()
                let duration = try reader.f64()
                let embedding = try reader.floats()
                known.append(KnownSpeaker(speaker: speaker, profile: SpeakerProfile(embedding: embedding, durationSeconds: duration),
                                          isPermanent: permanent, name: name))
            }
            request = .create(CreateRequest(instance: instance, providerID: providerID, sessionID: sessionID,
                                            sampleRate: sampleRate, optionsJSON: options, knownSpeakers: known))
        case .push:
            request = .push(instance: try reader.u64(), samples: try reader.floats(), arrivedSeconds: try reader.f64())
        case .finalize:
            request = .finalize(instance: try reader.u64())
        case .destroy:
            request = .destroy(instance: try reader.u64())
        case .checkOptions:
            request = .checkOptions(request: try reader.u64(), providerID: try reader.string(), optionsJSON: try reader.string())
        case .embedVoice:
            request = .embedVoice(request: try reader.u64(), providerID: try reader.string(), samples: try reader.floats())
        case .configure:
            var sections: [String: String] = [:]
            for _ in 0 ..< (try reader.count(minimumElementSize: 8, "config sections")) {
                let id = try reader.string()
                sections[id] = try reader.string()
            }
            request = .configure(sections: sections)
        }
        guard reader.isAtEnd else { throw WireError("\(kind) request has trailing bytes") }
        return request
    }
}

/// One provider a worker's plugin offers, with what the server needs to route to it.
struct WorkerProvider: Equatable, Sendable {
    var descriptor: ProviderDescriptor
    var supportsVoiceEmbedding: Bool
}

/// What a worker says of itself once its plugin is loaded: its first frame.
struct WorkerManifest: Equatable, Sendable {
    var protocolVersion: UInt32
    var providers: [WorkerProvider]
    var failures: [PluginLoadFailure]
}

/// What a worker tells the server.
enum WorkerReply: Equatable, Sendable {
    case ready(WorkerManifest)
    case created(instance: UInt64)
    case createFailed(instance: UInt64, error: PluginError)
    /// The turns a push produced, the samples it consumed and the worker thread's CPU time for it.
    /// `profiles`: the periodic voice-profile snapshot, when this push completed one (else empty).
    case processed(instance: UInt64, sampleCount: Int, cpuSeconds: Double, turns: [ProviderTurn], profiles: [Int32: SpeakerProfile])
    /// The last turns and the profile of every speaker the instance reported or was given.
    case finalized(instance: UInt64, cpuSeconds: Double, turns: [ProviderTurn], profiles: [Int32: SpeakerProfile])
    case instanceFailed(instance: UInt64, error: PluginError)
    /// The answer to checkOptions (no floats) or embedVoice (the embedding).
    case answered(request: UInt64, result: Result<[Float], PluginError>)
    /// A log line from the worker or its plugin.
    case log(level: UInt8, message: String, metadata: [String: String])
    /// Sent before `.ready` when the server has a provider config: the provider ids the plugin declared
    /// when it was loaded without any configuration. The server answers `.configure` with those ids'
    /// sections only, so a plugin never sees another provider's settings (the Falcon AccessKey).
    case configurationWanted(providerIDs: [String])

    private enum Kind: UInt8 {
        case ready = 64, created, createFailed, processed, finalized, instanceFailed, answered, log, configurationWanted
    }

    /// The instance a reply is about, if any.
    var instance: UInt64? {
        switch self {
        case .created(let instance), .createFailed(let instance, _), .processed(let instance, _, _, _, _),
             .finalized(let instance, _, _, _), .instanceFailed(let instance, _):
            return instance
        case .ready, .answered, .log, .configurationWanted:
            return nil
        }
    }

    func encoded() -> [UInt8] {
        var writer = WireWriter(capacity: 64)
        writer.u32(0)
        switch self {
        case .ready(let manifest):
            writer.u8(Kind.ready.rawValue)
            writer.u32(manifest.protocolVersion)
            WireRecords.provider.writeList(manifest.providers, &writer)
            WireRecords.loadFailure.writeList(manifest.failures, &writer)
        case .created(let instance):
            writer.u8(Kind.created.rawValue)
            writer.u64(instance)
        case .createFailed(let instance, let error):
            writer.u8(Kind.createFailed.rawValue)
            writer.u64(instance)
            Self.write(error, &writer)
        case .processed(let instance, let sampleCount, let cpuSeconds, let turns, let profiles):
            writer.u8(Kind.processed.rawValue)
            writer.u64(instance)
            writer.u32(UInt32(clamping: sampleCount))
            writer.f64(cpuSeconds)
            Self.write(turns, &writer)
            Self.write(profiles, &writer)
        case .finalized(let instance, let cpuSeconds, let turns, let profiles):
            writer.u8(Kind.finalized.rawValue)
            writer.u64(instance)
            writer.f64(cpuSeconds)
            Self.write(turns, &writer)
            Self.write(profiles, &writer)
        case .instanceFailed(let instance, let error):
            writer.u8(Kind.instanceFailed.rawValue)
            writer.u64(instance)
            Self.write(error, &writer)
        case .answered(let request, let result):
            writer.u8(Kind.answered.rawValue)
            writer.u64(request)
            switch result {
            case .success(let floats):
                writer.bool(true)
                writer.floats(floats)
            case .failure(let error):
                writer.bool(false)
                Self.write(error, &writer)
            }
        case .log(let level, let message, let metadata):
            writer.u8(Kind.log.rawValue)
            writer.u8(level)
            writer.string(message)
            writer.u32(UInt32(metadata.count))
            for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
                writer.string(key)
                writer.string(value)
            }
        case .configurationWanted(let ids):
            writer.u8(Kind.configurationWanted.rawValue)
            writer.u32(UInt32(ids.count))
            for id in ids { writer.string(id) }
        }
        return Framing.sealed(writer.bytes)
    }

    static func decode(_ payload: UnsafeRawBufferPointer) throws(WireError) -> WorkerReply {
        var reader = WireReader(payload)
        let byte = try reader.u8()
        guard let kind = Kind(rawValue: byte) else { throw WireError("unknown reply kind \(byte)") }
        let reply: WorkerReply
        switch kind {
        case .ready:
            let version = try reader.u32()
            let providers = try WireRecords.provider.readList(&reader, "providers")
            let failures = try WireRecords.loadFailure.readList(&reader, "load failures")
            reply = .ready(WorkerManifest(protocolVersion: version, providers: providers, failures: failures))
        case .created:
            reply = .created(instance: try reader.u64())
        case .createFailed:
            reply = .createFailed(instance: try reader.u64(), error: try readError(&reader))
        case .processed:
            let instance = try reader.u64()
            let count = Int(try reader.u32())
            let cpu = try reader.f64()
            let turns = try readTurns(&reader)
            reply = .processed(instance: instance, sampleCount: count, cpuSeconds: cpu, turns: turns, profiles: try readProfiles(&reader))
        case .finalized:
            let instance = try reader.u64()
            let cpu = try reader.f64()
            let turns = try readTurns(&reader)
            reply = .finalized(instance: instance, cpuSeconds: cpu, turns: turns, profiles: try readProfiles(&reader))
        case .instanceFailed:
            reply = .instanceFailed(instance: try reader.u64(), error: try readError(&reader))
        case .answered:
            let request = try reader.u64()
            reply = .answered(request: request, result: try reader.bool() ? .success(try reader.floats()) : .failure(try readError(&reader)))
        case .log:
            let level = try reader.u8()
            let message = try reader.string()
            var metadata: [String: String] = [:]
            for _ in 0 ..< (try reader.count(minimumElementSize: 8, "metadata entries")) {
                let key = try reader.string()
                metadata[key] = try reader.string()
            }
            reply = .log(level: level, message: message, metadata: metadata)
        case .configurationWanted:
            var ids: [String] = []
            for _ in 0 ..< (try reader.count(minimumElementSize: 4, "provider ids")) { ids.append(try reader.string()) }
            reply = .configurationWanted(providerIDs: ids)
        }
        guard reader.isAtEnd else { throw WireError("\(kind) reply has trailing bytes") }
        return reply
    }

    private static func write(_ error: PluginError, _ writer: inout WireWriter) {
        writer.string(error.code.rawValue)
        writer.string(error.message)
        writer.bool(error.status != nil)
        writer.i32(error.status ?? 0)
    }

    private static func readError(_ reader: inout WireReader) throws(WireError) -> PluginError {
        let codeText = try reader.string()
        let message = try reader.string()
        let hasStatus = try reader.bool()
        let status = try reader.i32()
        guard let code = PluginError.Code(rawValue: codeText) else { throw WireError("unknown plugin error code '\(codeText)'") }
        return PluginError(code, message, status: hasStatus ? status : nil)
    }

    private static func write(_ profiles: [Int32: SpeakerProfile], _ writer: inout WireWriter) {
        writer.u32(UInt32(profiles.count))
        for (speaker, profile) in profiles.sorted(by: { $0.key < $1.key }) {
            writer.i32(speaker)
            writer.f64(profile.durationSeconds)
            writer.floats(profile.embedding)
        }
    }

    private static func readProfiles(_ reader: inout WireReader) throws(WireError) -> [Int32: SpeakerProfile] {
        var profiles: [Int32: SpeakerProfile] = [:]
        for _ in 0 ..< (try reader.count(minimumElementSize: 16, "profiles")) {
            let speaker = try reader.i32()
            let duration = try reader.f64()
            profiles[speaker] = SpeakerProfile(embedding: try reader.floats(), durationSeconds: duration)
        }
        return profiles
    }

    private static func write(_ turns: [ProviderTurn], _ writer: inout WireWriter) {
        WireRecords.turn.writeList(turns, &writer)
    }

    private static func readTurns(_ reader: inout WireReader) throws(WireError) -> [ProviderTurn] {
        try WireRecords.turn.readList(&reader, "turns")
    }
}

/// Length prefixes: sealing a frame and cutting a byte stream back into frames.
enum Framing {
    /// Writes the payload length into the first four bytes (which `encoded()` reserved).
    static func sealed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let length = UInt32(bytes.count - 4).littleEndian
        withUnsafeBytes(of: length) { raw in for index in 0 ..< 4 { bytes[index] = raw[index] } }
        return bytes
    }
}

/// Accumulates bytes read from a socket and hands out whole frames' payloads.
struct FrameBuffer {
    private var storage: [UInt8] = []
    private var start = 0
    let maximumFrameBytes: Int

    init(maximumFrameBytes: Int = WorkerProtocol.maximumFrameBytes) {
        self.maximumFrameBytes = maximumFrameBytes
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0, start == storage.count {
            storage.removeAll(keepingCapacity: true)
            start = 0
        }
        storage.append(contentsOf: bytes)
    }

    /// Calls `body` with each complete payload, in order; throws when a length exceeds the maximum.
    mutating func drain(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        while storage.count - start >= 4 {
            let length = storage.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: start, as: UInt32.self))) }
            guard length >= 1, length <= maximumFrameBytes else {
                throw WireError("a frame of \(length) bytes (the limit is \(maximumFrameBytes))")
            }
            guard storage.count - start >= 4 + length else { break }
            let payloadStart = start + 4
            try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[payloadStart ..< payloadStart + length])) }
            start = payloadStart + length
        }
        // Keep the buffer from growing without bound: drop what was consumed once it dominates.
        if start > 0, start >= storage.count / 2 {
            storage.removeSubrange(0 ..< start)
            start = 0
        }
    }

    var bufferedByteCount: Int { storage.count - start }
}
