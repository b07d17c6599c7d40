import SpeakerSyncStore
import Foundation
import Logging
import PluginHost
import SessionProtocol
import Synchronization
import Testing
import TranscriptMerge
import WebSocketTransport
import MeetingSynth
import SpeakerSyncClient
@testable import SpeakerSyncServer

/// Session logic end to end without sockets or PostgreSQL: the real state machine, merger, speaker
/// registry and (for plugin sessions) the real dlopen'd plugin, with an in-memory store.
@Suite struct SessionRunnerTests {
    let store = InMemorySessionStore()
    let transport = RecordingTransport()
    /// Shared by every runner of a test, as in the server: a reconnect must find the old session.
    let claims = ConversationClaims()
    let plugins = PluginRegistry(directory: ResourceLocator.pluginsDirectory(nil), logger: Logger(label: "test"))
    private static let nextConnection = Atomic<UInt64>(1)

    func makeRunner(idleIntervalSeconds: Double = 300) -> SessionRunner {
        var logger = Logger(label: "session-test")
        logger.logLevel = .warning
        var config = SessionConfig.default
        config.knownProviders = Set(plugins.providers.map(\.id))
        config.idleIntervalSeconds = idleIntervalSeconds
        let environment = SessionEnvironment(
            transport: transport, store: store, providers: plugins, claims: claims, merge: .default,
            protocolConfig: config, serverVersion: "test", logger: logger
        )
        let id = ConnectionID(rawValue: Self.nextConnection.add(1, ordering: .relaxed).newValue)
        let runner = SessionRunner(connection: id, environment: environment)
        runner.opened(UpgradeRequest(path: "/v1/listen", query: [:], remoteAddress: nil))
        return runner
    }

    func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    func start(_ runner: SessionRunner, provider: String = "device", conversationID: String? = nil) {
        var message: [String: Any] = ["type": "start", "device_id": "phone-1", "provider": provider, "sample_rate": 16000, "encoding": "pcm_s16le"]
        if let conversationID { message["conversation_id"] = conversationID }
        runner.received(.text(json(message)))
    }

    func silence(seconds: Double) -> [UInt8] { [UInt8](repeating: 0, count: Int(seconds * 16000) * 2) }

    func wordsMessage(_ id: String, _ words: [(String, Double, Double)], final: Bool = true) -> String {
        json(["type": "words", "result_id": id, "final": final, "words": words.map { ["text": $0.0, "start": $0.1, "end": $0.2] }])
    }

    /// Every word of the device's live view, after applying all transcript updates in order.
    func liveWords(_ messages: [[String: Any]]) -> [String: (speaker: String?, stored: Bool)] {
        var utterances: [String: [[String: Any]]] = [:]
        for message in messages where message["type"] as? String == "transcript" {
            for id in message["removed"] as? [String] ?? [] { utterances[id] = nil }
            for utterance in message["upserted"] as? [[String: Any]] ?? [] {
                utterances[utterance["id"] as! String] = utterance["words"] as? [[String: Any]] ?? []
            }
        }
        var result: [String: (String?, Bool)] = [:]
        for word in utterances.values.flatMap({ $0 }) {
            result[word["text"] as! String] = (word["speaker"] as? String, word["stored"] as? Bool ?? false)
        }
        return result
    }

    @Test func deviceSessionLabelsEveryWordStoresItAndClosesNormally() async throws {
        let runner = makeRunner()
        start(runner)
        runner.received(.binary(silence(seconds: 4)))
        runner.received(.text(json(["type": "segments", "segments": [
            ["speaker": "A", "start": 0.0, "end": 2.0], ["speaker": "B", "start": 2.2, "end": 4.0],
        ]])))
        // "straddle" overlaps A by 0.15 s and B by 0.05 s; "gap" lies between the turns.
        runner.received(.text(wordsMessage("r1", [("hello", 0.2, 0.6), ("straddle", 1.85, 2.25), ("gap", 2.05, 2.15), ("world", 2.5, 3.0)])))
        runner.received(.text(json(["type": "finalize"])))
        let messages = try await transport.wait(for: runner.connection) { _ in transport.closeCode(runner.connection) != nil }
        #expect(transport.closeCode(runner.connection) == 1000)
        #expect(messages.first?["type"] as? String == "session")
        let final = try #require(messages.last { $0["type"] as? String == "transcript" })
        #expect(final["final"] as? Bool == true)
        let words = liveWords(messages)
        #expect(words.count == 4)
        #expect(words["hello"]?.speaker == "Speaker 1")
        #expect(words["straddle"]?.speaker == "Speaker 1")
        #expect(words["gap"]?.speaker != nil)
        #expect(words["world"]?.speaker == "Speaker 2")
        #expect(words.values.allSatisfy { $0.stored })
        let conversationID = try #require(messages.first?["conversation_id"] as? String)
        let stored = store.words(conversationID)
        #expect(stored.map(\.text) == ["hello", "straddle", "gap", "world"])
        #expect(stored.map(\.speaker) == ["hello", "straddle", "gap", "world"].map { words[$0]?.speaker })
        #expect(store.conversations.withLock { $0[conversationID]?.state.status } == .finalized)
        #expect(store.conversations.withLock { $0[conversationID]?.state.audioSeconds } == 4.0)
    }

    /// A word no turn reaches stays without a speaker while turns may still come; finalize gives it the
    /// nearest turn's speaker (a word beyond the audio excepted), sent and stored. A dropped connection
    /// (resumable) leaves it as it was.
    @Test func finalizeGivesWordsNoTurnReachesTheNearestSpeaker() async throws {
        for finalizes in [true, false] {
            let runner = makeRunner()
            start(runner)
            runner.received(.binary(silence(seconds: 8)))
            runner.received(.text(json(["type": "segments", "segments": [
                ["speaker": "A", "start": 0.0, "end": 2.0], ["speaker": "B", "start": 6.0, "end": 8.0],
            ]])))
            runner.received(.text(wordsMessage("r1", [("early", 0.5, 1.0), ("stranded", 3.0, 3.4), ("ahead", 9.0, 9.5)])))
            var messages = try await transport.wait(for: runner.connection) { liveWords($0)["ahead"] != nil }
            #expect(liveWords(messages)["stranded"]?.speaker == nil, "turns may still come")
            let conversationID = try #require(messages.first?["conversation_id"] as? String)
            if finalizes {
                runner.received(.text(json(["type": "finalize"])))
                messages = try await transport.wait(for: runner.connection) { _ in transport.closeCode(runner.connection) != nil }
                let words = liveWords(messages)
                #expect(words["stranded"]?.speaker == "Speaker 1")
                #expect(words["ahead"]?.speaker == nil, "beyond the audio: no provider heard it")
                #expect(store.words(conversationID).map(\.speaker) == ["Speaker 1", "Speaker 1", nil])
            } else {
                runner.closed()
                _ = try await transport.wait(for: runner.connection) { _ in
                    store.conversations.withLock { $0[conversationID]?.state.status } == .interrupted
                }
                #expect(store.words(conversationID).map(\.speaker) == ["Speaker 1", nil, nil])
            }
        }
    }

    @Test func renameAndMergeRelabelPastAndFutureWords() async throws {
        let runner = makeRunner()
        start(runner)
        runner.received(.text(json(["type": "segments", "segments": [
            ["speaker": "A", "start": 0.0, "end": 1.0], ["speaker": "B", "start": 1.0, "end": 2.0],
        ]])))
        runner.received(.text(wordsMessage("r1", [("one", 0.1, 0.5), ("two", 1.2, 1.6)])))
        runner.received(.text(json(["type": "rename_speaker", "speaker": "Speaker 2", "name": "Alice"])))
        var messages = try await transport.wait(for: runner.connection) { messages in
            messages.contains { message in
                (message["upserted"] as? [[String: Any]])?.contains { $0["name"] as? String == "Alice" } == true
            }
        }
        #expect(messages.contains { ($0["speakers"] as? [[String: Any]])?.contains { $0["name"] as? String == "Alice" } == true })
        runner.received(.text(json(["type": "merge_speakers", "from": "Speaker 2", "into": "Speaker 1"])))
        runner.received(.text(json(["type": "segments", "segments": [["speaker": "B", "start": 2.0, "end": 3.0]]])))
        runner.received(.text(wordsMessage("r2", [("three", 2.2, 2.6)])))
        runner.received(.text(json(["type": "rename_speaker", "speaker": "Speaker 7", "name": "Nobody"])))
        runner.received(.text(json(["type": "finalize"])))
        messages = try await transport.wait(for: runner.connection) { _ in transport.closeCode(runner.connection) != nil }
        let words = liveWords(messages)
        #expect(words.mapValues(\.speaker) == ["one": "Speaker 1", "two": "Speaker 1", "three": "Speaker 1"])
        #expect(messages.contains { $0["type"] as? String == "error" && $0["code"] as? String == "unknown_speaker" })
        #expect(transport.closeCode(runner.connection) == 1000)
    }

    @Test func reconnectResumesTheSameConversationWithoutLosingWords() async throws {
        let first = makeRunner()
        start(first)
        first.received(.binary(silence(seconds: 2)))
        first.received(.text(json(["type": "segments", "segments": [["speaker": "A", "start": 0.0, "end": 2.0]]])))
        first.received(.text(wordsMessage("r0", [("before", 0.5, 1.0)])))
        let firstMessages = try await transport.wait(for: first.connection) { liveWords($0)["before"]?.speaker != nil }
        let conversationID = try #require(firstMessages.first?["conversation_id"] as? String)
        first.closed()   // the network dropped: no finalize

        let second = makeRunner()
        start(second, conversationID: conversationID)
        second.received(.binary(silence(seconds: 1)))
        second.received(.text(json(["type": "segments", "segments": [["speaker": "A", "start": 2.0, "end": 3.0]]])))
        second.received(.text(wordsMessage("r1", [("after", 2.2, 2.8)])))
        second.received(.text(json(["type": "finalize"])))
        let messages = try await transport.wait(for: second.connection) { _ in transport.closeCode(second.connection) != nil }
        let session = try #require(messages.first)
        #expect(session["resumed"] as? Bool == true)
        #expect(session["audio_offset_seconds"] as? Double == 2.0)
        let words = liveWords(messages)
        #expect(words["before"]?.speaker == "Speaker 1")
        #expect(words["after"]?.speaker == "Speaker 1")
        #expect(store.words(conversationID).map(\.text) == ["before", "after"])
        #expect(store.conversations.withLock { $0[conversationID]?.state.audioSeconds } == 3.0)
    }

    @Test func storageOutageIsReportedAndWordsAreMarkedNotStored() async throws {
        let runner = makeRunner()
        start(runner)
        _ = try await transport.wait(for: runner.connection) { $0.contains { $0["type"] as? String == "session" } }
        store.failWrites.store(true, ordering: .relaxed)
        runner.received(.text(wordsMessage("r1", [("lost?", 0.1, 0.4)])))
        let messages = try await transport.wait(for: runner.connection) { liveWords($0)["lost?"] != nil }
        let error = try #require(messages.first { $0["type"] as? String == "error" })
        #expect(error["code"] as? String == "storage_unavailable")
        #expect(error["fatal"] as? Bool == false)
        #expect(liveWords(messages)["lost?"]?.stored == false)
        #expect(transport.closeCode(runner.connection) == nil)
    }

    @Test func silentSessionIsClosedAsIdleAndLeftResumable() async throws {
        let runner = makeRunner(idleIntervalSeconds: 0.2)
        start(runner)
        runner.received(.text(wordsMessage("r1", [("early", 0.1, 0.4)])))
        let messages = try await transport.wait(for: runner.connection) { _ in transport.closeCode(runner.connection) != nil }
        #expect(transport.closeCode(runner.connection) == CloseCode.idleTimeout)
        #expect(messages.contains { $0["code"] as? String == "idle_timeout" }, "\(messages)")
        // This store holds only this session's conversation.
        let conversationID = try #require(store.conversations.withLock { $0.keys.first })
        let deadline = ContinuousClock.now + .seconds(5)
        while store.conversations.withLock({ $0[conversationID]?.state.status }) != .interrupted, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(store.conversations.withLock { $0[conversationID]?.state.status } == .interrupted)
        #expect(store.words(conversationID).map(\.text) == ["early"])
    }

    @Test func unknownProviderIsRefusedWithItsCode() async throws {
        let runner = makeRunner()
        start(runner, provider: "no-such-provider")
        let messages = try await transport.wait(for: runner.connection) { _ in transport.closeCode(runner.connection) != nil }
        #expect(messages.first?["code"] as? String == "unknown_provider")
        #expect(transport.closeCode(runner.connection) == CloseCode.policyViolation)
    }

    /// A bad option is the client's mistake: `invalid_options` naming the option and close 1007 (not
    /// `provider_failed`/1011, which tells a device to retry later); the conversation is not left
    /// claimed, so the corrected start goes through at once.
    @Test(arguments: [("energy", #"{"treshold": 1}"#, "unknown option 'treshold'"),
                      ("speakerkit", #"{"num_speakers": 0}"#, "num_speakers must be an integer from 1 to 64")])
    func badOptionsAreRefusedAsTheClientsMistake(provider: String, options: String, expected: String) async throws {
        func startMessage(_ options: String) -> String {
            #"{"type":"start","device_id":"phone-1","conversation_id":"opts-\#(provider)","provider":"\#(provider)","sample_rate":16000,"encoding":"pcm_s16le","options":\#(options)}"#
        }
        let refused = makeRunner()
        refused.received(.text(startMessage(options)))
        let messages = try await transport.wait(for: refused.connection) { _ in transport.closeCode(refused.connection) != nil }
        let error = try #require(messages.first { $0["type"] as? String == "error" })
        #expect(error["code"] as? String == "invalid_options")
        #expect((error["message"] as? String ?? "").contains(expected), "\(error)")
        #expect(error["fatal"] as? Bool == true)
        #expect(transport.closeCode(refused.connection) == CloseCode.invalidPayload)

        let accepted = makeRunner()
        accepted.received(.text(startMessage("{}")))
        let answer = try await transport.wait(for: accepted.connection) { messages in messages.contains { $0["type"] as? String == "session" } }
        #expect(answer.contains { $0["type"] as? String == "session" && $0["conversation_id"] as? String == "opts-\(provider)" })
        #expect(transport.closeCode(accepted.connection) == nil)
    }

    @Test func segmentsNeedTheDeviceProvider() async throws {
        let runner = makeRunner()
        start(runner, provider: "none")
        runner.received(.text(json(["type": "segments", "segments": [["speaker": "A", "start": 0.0, "end": 1.0]]])))
        runner.received(.text(wordsMessage("r1", [("kept", 0.1, 0.4)])))
        runner.received(.text(json(["type": "finalize"])))
        let messages = try await transport.wait(for: runner.connection) { _ in transport.closeCode(runner.connection) != nil }
        #expect(messages.contains { $0["code"] as? String == "invalid_field" })
        let words = liveWords(messages)
        #expect(words["kept"] != nil && words["kept"]?.speaker == nil)
    }

    @Test func pluginSessionLabelsASyntheticMeetingThroughTheDlopenedPlugin() async throws {
        let script = try MeetingScript.generate(seed: 11, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 11)
        let runner = makeRunner()
        start(runner, provider: "energy")
        var bytes = [UInt8]()
        for sample in meeting.audio {
            let value = UInt16(bitPattern: Int16(max(-1, min(1, sample)) * 32767))
            bytes += [UInt8(value & 0xff), UInt8(value >> 8)]
        }
        for chunk in stride(from: 0, to: bytes.count, by: 3200) {
            runner.received(.binary(Array(bytes[chunk..<min(bytes.count, chunk + 3200)])))
        }
        for (index, word) in meeting.words.enumerated() {
            runner.received(.text(wordsMessage("w\(index)", [(word.text + "#\(index)", word.startSeconds, word.endSeconds)])))
        }
        runner.received(.text(json(["type": "finalize"])))
        let messages = try await transport.wait(for: runner.connection, timeoutSeconds: 60) { _ in transport.closeCode(runner.connection) != nil }
        #expect(transport.closeCode(runner.connection) == 1000)
        let live = liveWords(messages)
        #expect(live.count == meeting.words.count)
        let pairs = meeting.words.enumerated().map { index, word in (truth: word.speaker, hypothesis: live[word.text + "#\(index)"]?.speaker ?? nil) }
        let agreement = WordSpeakerAgreement(pairs: pairs)
        #expect(agreement.unlabelledCount == 0)
        #expect(agreement.accuracy >= 0.9, "energy baseline on two synthetic voices: \(agreement)")

        // The stats message: after the final transcript, before the close, measuring this session.
        let stats = try #require(messages.last { $0["type"] as? String == "stats" })
        let finalIndex = try #require(messages.lastIndex { $0["type"] as? String == "transcript" && $0["final"] as? Bool == true })
        #expect(messages.firstIndex { $0["type"] as? String == "stats" }! > finalIndex)
        #expect(abs((stats["audio_seconds"] as? Double ?? 0) - meeting.durationSeconds) < 0.01)
        #expect(stats["words"] as? Int == meeting.words.count)
        let chunks = try #require(stats["chunk_processing_seconds"] as? [Double])
        #expect(chunks.count == (bytes.count + 3199) / 3200)
        let first = try #require(stats["first_label_latency_seconds"] as? [Double])
        let final = try #require(stats["final_label_latency_seconds"] as? [Double])
        #expect(first.count == meeting.words.count && final.count == first.count)
        #expect(zip(first, final).allSatisfy { $0 >= 0 && $1 >= $0 })
        #expect((stats["real_time_factor"] as? Double).map { $0 > 0 } == true)
        let finalTurns = try #require(stats["final_turns"] as? [[String: Any]])
        let liveTurns = try #require(stats["live_turns"] as? [[String: Any]])
        #expect(!finalTurns.isEmpty && !liveTurns.isEmpty)
        #expect(Set(finalTurns.compactMap { $0["speaker"] as? String }).isSubset(of: Set(live.values.compactMap(\.speaker)).union(["Speaker 1", "Speaker 2", "Speaker 3"])))
    }
}
