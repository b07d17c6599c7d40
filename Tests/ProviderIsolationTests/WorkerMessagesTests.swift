import PluginHost
import Testing
@testable import ProviderIsolation

/// The frames between the server and its workers: every request and reply survives encoding, a byte
/// stream cut anywhere gives the same frames back, and malformed bytes are errors, never traps.
@Suite struct WorkerMessagesTests {
    static let turns = [
        ProviderTurn(turnID: 1, speaker: 0, startSeconds: 0.5, endSeconds: 1.25, confidence: 0.75),
        ProviderTurn(turnID: 1 << 40, speaker: 2_000_001, startSeconds: 3, endSeconds: 3, confidence: 0, isRemoved: true),
    ]
    static let known = [
        KnownSpeaker(speaker: 1_000_000, profile: SpeakerProfile(embedding: [0.25, -1, 3.5], durationSeconds: 6.5), isPermanent: true, name: "Ana"),
        KnownSpeaker(speaker: 2_000_000, profile: SpeakerProfile(embedding: [], durationSeconds: 0), isPermanent: false, name: nil),
    ]

    static let requests: [WorkerRequest] = [
        .create(.init(instance: 7, providerID: "speakerkit", sessionID: "ab12", sampleRate: 16_000, optionsJSON: #"{"num_speakers":2}"#,
                      knownSpeakers: known)),
        .push(instance: 7, samples: [0, 0.5, -0.25, .leastNonzeroMagnitude, 1], arrivedSeconds: 12_345.678_901),
        .push(instance: 8, samples: [], arrivedSeconds: 0),
        .finalize(instance: 7),
        .destroy(instance: 7),
        .checkOptions(request: 3, providerID: "energy", optionsJSON: "{}"),
        .embedVoice(request: 4, providerID: "speakerkit", samples: [Float](repeating: 0.125, count: 1000)),
        .configure(sections: ["falcon": #"{"access_key":"k"}"#, "sherpa-onnx": "{}"]),
        .configure(sections: [:]),
    ]

    static let replies: [WorkerReply] = [
        .ready(WorkerManifest(
            protocolVersion: WorkerProtocol.version,
            providers: [WorkerProvider(descriptor: ProviderDescriptor(id: "energy", name: "Energy ü", version: "1.0", description: "",
                                                                     latencyClass: .nearRealtime, licence: "MIT", kind: .plugin(path: "/p/libe.so")),
                                       supportsVoiceEmbedding: false)],
            failures: [PluginLoadFailure(path: "/p/libx.so", code: .duplicateProvider, message: "taken", providerID: "energy"),
                       PluginLoadFailure(path: "/p/liby.so", code: .missingEntry, message: "not a plugin")])),
        .created(instance: 9),
        .createFailed(instance: 9, error: PluginError(.invalidOptions, "unknown option 'colour'", status: -1)),
        .processed(instance: 9, sampleCount: 1600, cpuSeconds: 0.00125, turns: turns, profiles: [:]),
        .processed(instance: 9, sampleCount: 0, cpuSeconds: 0, turns: [], profiles: [:]),
        // A push that completed a voice-profile snapshot carries it.
        .processed(instance: 9, sampleCount: 1600, cpuSeconds: 0.001, turns: turns, profiles: [2: SpeakerProfile(embedding: [0.5, -1], durationSeconds: 12)]),
        .finalized(instance: 9, cpuSeconds: 0.5, turns: turns, profiles: [0: SpeakerProfile(embedding: [1, 2], durationSeconds: 3), 5: SpeakerProfile(embedding: [0], durationSeconds: 0)]),
        .instanceFailed(instance: 9, error: PluginError(.pushFailed, "boom")),
        .answered(request: 4, result: .success([0.5, 0.25])),
        .answered(request: 5, result: .failure(PluginError(.invalidArgument, "0.2 s of speech found"))),
        .log(level: 3, message: "hello", metadata: ["session": "ab12", "plugin": "/p/libe.so"]),
        .configurationWanted(providerIDs: ["sherpa-onnx", "falcon"]),
        .configurationWanted(providerIDs: []),
    ]

    /// Every frame's payload, decoded.
    static func payloads(_ bytes: [UInt8]) throws -> [[UInt8]] {
        var buffer = FrameBuffer()
        var payloads: [[UInt8]] = []
        bytes.withUnsafeBytes { buffer.append($0) }
        try buffer.drain { payloads.append(Array($0)) }
        #expect(buffer.bufferedByteCount == 0)
        return payloads
    }

    @Test func requestsRoundTrip() throws {
        for request in Self.requests {
            let payloads = try Self.payloads(request.encoded())
            #expect(payloads.count == 1)
            let decoded = try payloads[0].withUnsafeBytes { try WorkerRequest.decode($0) }
            #expect(decoded == request)
        }
    }

    @Test func repliesRoundTrip() throws {
        for reply in Self.replies {
            let payloads = try Self.payloads(reply.encoded())
            let decoded = try payloads[0].withUnsafeBytes { try WorkerReply.decode($0) }
            #expect(decoded == reply)
        }
    }

    /// A socket delivers bytes in any pieces: frames come out whole and in order whatever the cuts.
    @Test(arguments: [1, 3, 7, 64, 4096])
    func framesSurviveAnyChunking(chunk: Int) throws {
        let stream = Self.replies.flatMap { $0.encoded() }
        var buffer = FrameBuffer()
        var decoded: [WorkerReply] = []
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + chunk)
            stream[offset ..< end].withUnsafeBytes { buffer.append($0) }
            try buffer.drain { decoded.append(try WorkerReply.decode($0)) }
            offset = end
        }
        #expect(decoded == Self.replies)
    }

    @Test func malformedBytesAreErrors() throws {
        // Every proper prefix of a payload is short somewhere.
        let payload = Array(WorkerReply.finalized(instance: 1, cpuSeconds: 0, turns: Self.turns, profiles: [1: SpeakerProfile(embedding: [1], durationSeconds: 1)]).encoded().dropFirst(4))
        for length in 0 ..< payload.count {
            #expect(throws: WireError.self) { try Array(payload.prefix(length)).withUnsafeBytes { try WorkerReply.decode($0) } }
        }
        #expect(throws: WireError.self) { try [UInt8(200)].withUnsafeBytes { try WorkerRequest.decode($0) } }
        // Trailing bytes, a boolean that is not 0 or 1, a count larger than the frame.
        let created = Array(WorkerReply.created(instance: 2).encoded().dropFirst(4)) + [0]
        #expect(throws: WireError.self) { try created.withUnsafeBytes { try WorkerReply.decode($0) } }
        var answered = Array(WorkerReply.answered(request: 1, result: .success([])).encoded().dropFirst(4))
        answered[9] = 2
        #expect(throws: WireError.self) { try answered.withUnsafeBytes { try WorkerReply.decode($0) } }
        var push = Array(WorkerRequest.push(instance: 1, samples: [1], arrivedSeconds: 1).encoded().dropFirst(4))
        push[9] = 0xff
        #expect(throws: WireError.self) { try push.withUnsafeBytes { try WorkerRequest.decode($0) } }
    }

    @Test func oversizedOrEmptyFramesAreRefused() {
        func drained(_ bytes: [UInt8], limit: Int) -> (any Error)? {
            var buffer = FrameBuffer(maximumFrameBytes: limit)
            bytes.withUnsafeBytes { buffer.append($0) }
            do {
                try buffer.drain { _ in }
                return nil
            } catch {
                return error
            }
        }
        #expect(drained([17, 0, 0, 0] + [UInt8](repeating: 0, count: 17), limit: 16) is WireError)
        #expect(drained([0, 0, 0, 0], limit: 16) is WireError)
        #expect(drained([16, 0, 0, 0] + [UInt8](repeating: 0, count: 16), limit: 16) == nil)
    }
}
