import Foundation
import Logging
import MeetingSynth
import PostgresClient
import SpeakerSyncClient
import SpeakerSyncStore
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// Shadow providers through the real server (libwebsockets on loopback, PostgreSQL, plugins in their
/// worker processes): the device gets its own provider's labels only, and every provider's labelling
/// of the same words is stored.
@Suite(.serialized) struct ShadowProvidersEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    /// One stored labelling's word speakers in time order, joined with the words they label.
    static func labelledWords(_ server: TestServer, _ conversationID: String, _ name: String) throws -> [(start: Double, speaker: String?)] {
        let connection = try PGConnection(connectionString: server.connectionString)
        return try connection.query("""
            SELECT w.start_seconds, l.speaker FROM labelling_words l
            JOIN words w ON w.conversation_id = l.conversation_id AND w.result_id = l.result_id AND w.word_index = l.word_index
            WHERE l.conversation_id = $1 AND l.name = $2 ORDER BY w.start_seconds, w.result_id, w.word_index
            """, [conversationID, name]).rows.map {
            (try $0.decode(Double.self, column: "start_seconds"), try $0.decode(String?.self, column: "speaker"))
        }
    }

    /// speakerkit labels the session; energy runs beside it on the same audio. The device's transcript
    /// is speakerkit's (the stored live labelling equals what it was sent, word for word); energy's
    /// labelling covers the same words and labels them well enough to be worth comparing; both carry
    /// their figures.
    @Test func theDeviceGetsItsProviderAndEveryProvidersLabelsAreStored() async throws {
        let server = try TestServer()
        // Seed 23: not used by other tests or by any reported figure.
        let script = try MeetingScript.generate(seed: 23, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 23)
        var config = DeviceStreamConfig(url: server.ws, provider: "speakerkit", deviceID: "phone-shadow")
        config.shadowProviders = ["energy"]
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let report = try await server.stream(config, audio: meeting.audio, sampleRate: meeting.sampleRate, words: words)
        #expect(report.closeCode == 1000)
        let sent = report.transcript.words
        #expect(sent.count == meeting.words.count)

        let (status, body) = try server.json("/v1/conversations/\(report.conversationID)/labellings")
        #expect(status == 200)
        let labellings = body["labellings"] as? [[String: Any]] ?? []
        #expect(labellings.map { $0["name"] as? String } == ["energy", "speakerkit"])
        #expect(labellings.map { $0["source"] as? String } == ["shadow", "live"])
        #expect(labellings.allSatisfy { $0["complete"] as? Bool == true })
        #expect(labellings.allSatisfy { $0["words"] as? Int == meeting.words.count })
        for labelling in labellings {
            let stats = labelling["stats"] as? [String: Any] ?? [:]
            #expect((stats["real_time_factor"] as? Double ?? 0) > 0, "\(labelling["name"] ?? "")")
            #expect(((stats["label_latency_seconds"] as? [String: Any])?["count"] as? Int ?? 0) > 0)
        }

        // The live labelling is exactly what the device was sent and what the words table holds.
        let live = try Self.labelledWords(server, report.conversationID, "speakerkit")
        #expect(live.map(\.speaker) == sent.map(\.speaker))
        #expect(live.map(\.speaker) == (try server.storedWords(report.conversationID)).map(\.speaker))

        // The shadow labelled the same words by itself. The bound is energy's on its own end-to-end
        // test (0.9 on seed 5) less a margin for an unseen meeting: a shadow fed the wrong audio, or
        // none, would sit near chance (0.5) or leave the words unlabelled.
        let shadow = try Self.labelledWords(server, report.conversationID, "energy")
        #expect(shadow.count == meeting.words.count)
        let agreement = WordSpeakerAgreement(pairs: zip(meeting.words, shadow).map { (truth: $0.speaker, hypothesis: $1.speaker) })
        #expect(agreement.accuracy >= 0.75, "\(agreement)")

        // Any labelling reads as a transcript; one that does not exist is a 404 naming those that do.
        let (_, energyTranscript) = try server.json("/v1/conversations/\(report.conversationID)/transcript?provider=energy")
        let energyWords = (energyTranscript["utterances"] as? [[String: Any]] ?? []).flatMap { $0["words"] as? [[String: Any]] ?? [] }
        #expect(energyWords.map { $0["speaker"] as? String } == shadow.map(\.speaker))
        let missing = try server.request("GET", "/v1/conversations/\(report.conversationID)/transcript?provider=falcon")
        #expect(missing.status == 404 && missing.text.contains("labelling_not_found") && missing.text.contains("energy, speakerkit"))
    }

    /// A dropped connection stores every labelling as incomplete; resuming with the same shadow
    /// continues its labelling, so after finalize it covers every word of both connections.
    @Test func aResumedSessionContinuesItsShadowsLabelling() async throws {
        let server = try TestServer()
        // Seed 29: not used elsewhere.
        let script = try MeetingScript.generate(seed: 29, speakerCount: 2, turnCount: 8)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 29)
        let split = meeting.audio.count / 2
        let splitSeconds = Double(split) / Double(meeting.sampleRate)
        let allWords = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        var config = DeviceStreamConfig(url: server.ws, provider: "speakerkit", deviceID: "phone-resume")
        config.conversationID = "shadow-resume"
        config.shadowProviders = ["energy"]
        config.sendFinalize = false
        let first = try await server.stream(config, audio: Array(meeting.audio[..<split]), sampleRate: meeting.sampleRate,
                                            words: allWords.filter { $0.endSeconds <= splitSeconds })
        #expect(first.conversationID == "shadow-resume")
        let interrupted = try #require(try await Self.waitForLabellings(server, "shadow-resume", complete: false))
        #expect(interrupted.map { $0["name"] as? String } == ["energy", "speakerkit"])

        config.sendFinalize = true
        config.audioOffsetSeconds = splitSeconds
        // Word times are on the conversation's timeline, as a device keeps them across a reconnect.
        let secondWords = allWords.filter { $0.endSeconds > splitSeconds }
        let second = try await server.stream(config, audio: Array(meeting.audio[split...]), sampleRate: meeting.sampleRate, words: secondWords)
        #expect(second.closeCode == 1000)
        let finished = try #require(try await Self.waitForLabellings(server, "shadow-resume", complete: true))
        #expect(finished.allSatisfy { $0["words"] as? Int == meeting.words.count })
        let shadow = try Self.labelledWords(server, "shadow-resume", "energy")
        #expect(shadow.count == meeting.words.count)
        // Labels on both sides of the split: the first connection's were kept, not replaced.
        #expect(shadow.contains { $0.start < splitSeconds && $0.speaker != nil })
        #expect(shadow.contains { $0.start > splitSeconds && $0.speaker != nil })
    }

    /// The conversation's two labellings once both are (in)complete as asked; nil if not within 30 s
    /// (the interrupted session is stored after the close, on the server's time).
    static func waitForLabellings(_ server: TestServer, _ id: String, complete: Bool) async throws -> [[String: Any]]? {
        let (url, token) = (server.http + "/v1/conversations/\(id)/labellings", server.adminKey)
        let held = try await Blocking.run {
            Polling.until(seconds: 30) {
                let labellings = ((try? SimpleHTTPClient.get(url, token: token).json()) as? [String: Any])?["labellings"] as? [[String: Any]] ?? []
                return labellings.count == 2 && labellings.allSatisfy { $0["complete"] as? Bool == complete }
            }
        }
        guard held else { return nil }
        return try server.json("/v1/conversations/\(id)/labellings").body["labellings"] as? [[String: Any]]
    }

    /// Shadows the server cannot run are refused at the start with a specific code, and nothing is stored.
    @Test func shadowsThatCannotRunAreRefusedAtTheStart() async throws {
        let server = try TestServer()
        let cases: [(shadows: String, code: String)] = [
            (#"["nemo-msdd"]"#, "unknown_provider"),
            (#"["device"]"#, "invalid_field"),
            (#"["speakerkit"]"#, "invalid_field"),
            (#"["energy","energy"]"#, "invalid_field"),
            (#"["energy","sherpa-onnx","falcon"]"#, "invalid_field"),
            (#""energy""#, "invalid_field"),
        ]
        for (index, refusal) in cases.enumerated() {
            let client = try WebSocketClient(logger: EndToEndTests.logger)
            defer { client.shutdown() }
            let connection = try client.connect(url: server.ws, headers: server.authorization)
            let events = EventReader(connection.events)
            connection.send(.text("""
                {"type":"start","conversation_id":"refused-\(index)","device_id":"d","provider":"speakerkit","sample_rate":16000,
                 "encoding":"pcm_s16le","shadow_providers":\(refusal.shadows)}
                """))
            let answer = await events.nextJSON()
            #expect(answer?["type"] as? String == "error", "\(refusal.shadows)")
            #expect(answer?["code"] as? String == refusal.code, "\(refusal.shadows): \(answer ?? [:])")
            #expect(try server.json("/v1/conversations/refused-\(index)").status == 404)
        }
    }
}
