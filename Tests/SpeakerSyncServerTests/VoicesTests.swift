import Foundation
import MeetingSynth
import SpeakerSyncAudio
import SpeakerSyncClient
import Testing
@testable import SpeakerSyncServer
import DeterministicRandom

/// Known voices end to end, with the real speakerkit plugin (silero VAD + GE2E) and PostgreSQL:
/// an enrolled person is recognised by name, and a reconnect keeps each speaker's label.
@Suite(.serialized) struct VoicesTests {
    typealias TestServer = EndToEndTests.TestServer

    static func meeting(seed: UInt64) throws -> (script: MeetingScript, meeting: SynthesizedMeeting) {
        let script = try MeetingScript.generate(seed: seed, speakerCount: 2, turnCount: 8, wordsPerTurn: 8 ... 14)
        return (script, try MeetingSynthesizer().synthesize(script, seed: seed))
    }

    /// A few seconds of one voice alone, as a WAV: what a user records to enrol.
    static func enrolmentClip(_ voice: VoiceSpec, seed: UInt64) throws -> [UInt8] {
        let words = MeetingVocabulary.words
        var rng = SeededRandom.derived(from: seed, purpose: 9)
        let turns = (0 ..< 3).map { _ in MeetingTurn(speaker: "p", words: (0 ..< 10).map { _ in words[rng.integer(0 ... words.count - 1)] }) }
        let clip = try MeetingSynthesizer().synthesize(MeetingScript(speakers: [MeetingSpeaker(id: "p", voice: voice)], turns: turns), seed: seed)
        return Array(clip.wavData())
    }

    func stream(_ server: TestServer, _ meeting: SynthesizedMeeting, deviceID: String, range: Range<Int>? = nil,
                conversationID: String? = nil, finalize: Bool = true) async throws -> StreamReport {
        let range = range ?? 0 ..< meeting.audio.count
        let from = Double(range.lowerBound) / 16_000, to = Double(range.upperBound) / 16_000
        var config = DeviceStreamConfig(url: server.ws, provider: "speakerkit", deviceID: deviceID)
        config.conversationID = conversationID
        config.sendFinalize = finalize
        if range.lowerBound > 0 { config.audioOffsetSeconds = from }
        let words = meeting.words.filter { $0.endSeconds > from && $0.endSeconds <= to }
            .map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        return try await server.stream(config, audio: Array(meeting.audio[range]), sampleRate: 16_000, words: words)
    }

    @Test func enrolledPersonIsRecognisedByNameAndNoOneElseGetsTheName() async throws {
        let server = try TestServer()
        let (script, meeting) = try Self.meeting(seed: 61)
        let alice = script.speakers[1]
        let clip = try Self.enrolmentClip(alice.voice, seed: 62)
        let enrolled = try server.request("POST", "/v1/people?device_id=phone-v&name=Alice", body: clip, contentType: "audio/wav")
        #expect(enrolled.status == 201, "\(enrolled.text)")
        let listed = try server.json("/v1/people?device_id=phone-v").body["people"] as? [[String: Any]]
        #expect(listed?.count == 1 && listed?.first?["name"] as? String == "Alice")

        let report = try await stream(server, meeting, deviceID: "phone-v")
        #expect(report.closeCode == 1000)
        var named: [String: (alice: Int, total: Int)] = [:]
        let truth = Dictionary(meeting.words.map { ("\($0.text)|\(Int(($0.startSeconds * 1000).rounded()))", $0.speaker) }, uniquingKeysWith: { a, _ in a })
        for utterance in report.transcript.utterances {
            for word in utterance.words {
                guard let speaker = truth["\(word.text)|\(Int((word.startSeconds * 1000).rounded()))"] else { continue }
                named[speaker, default: (0, 0)].total += 1
                if utterance.name == "Alice" { named[speaker, default: (0, 0)].alice += 1 }
            }
        }
        let aliceWords = named[alice.id] ?? (0, 0), otherWords = named[script.speakers[0].id] ?? (0, 0)
        #expect(aliceWords.total > 0 && Double(aliceWords.alice) >= 0.8 * Double(aliceWords.total), "Alice's words named Alice: \(aliceWords)")
        #expect(Double(otherWords.alice) <= 0.1 * Double(max(1, otherWords.total)), "the other voice named Alice: \(otherWords)")

        // Bad enrolments get specific errors.
        let noName = try server.request("POST", "/v1/people?device_id=phone-v", body: clip, contentType: "audio/wav")
        #expect(noName.status == 400 && noName.text.contains("missing_parameter"))
        let silence = Array(WAVWriter.encode(AudioBuffer(samples: [Float](repeating: 0, count: 32_000), sampleRate: 16_000), format: .pcm16))
        let quiet = try server.request("POST", "/v1/people?device_id=phone-v&name=Bob", body: silence, contentType: "audio/wav")
        #expect(quiet.status == 422 && quiet.text.contains("no_usable_voice"))
        let garbage = try server.request("POST", "/v1/people?device_id=phone-v&name=Bob", body: Array("not audio".utf8), contentType: "audio/wav")
        #expect(garbage.status == 400 && garbage.text.contains("invalid_audio"))
    }

    @Test func aReconnectKeepsEachSpeakersLabelAndSpeakersCanBeSavedAsPeople() async throws {
        let server = try TestServer()
        let (script, meeting) = try Self.meeting(seed: 71)
        let cut = meeting.turns[4].startSeconds - 0.2   // between turns, so each half has both voices
        let cutSample = Int(cut * 16_000)
        let first = try await stream(server, meeting, deviceID: "phone-r", range: 0 ..< cutSample, finalize: false)
        // Wait (bounded) until the server has stored the interrupted session, voice profiles included.
        for _ in 0 ..< 1200 {
            if try server.json("/v1/conversations/\(first.conversationID)").body["status"] as? String == "interrupted" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let second = try await stream(server, meeting, deviceID: "phone-r", range: cutSample ..< meeting.audio.count, conversationID: first.conversationID)
        #expect(second.closeCode == 1000)
        // Majority label per true speaker in each half must be the same. The first half is read from the
        // resumed session's view (it re-sends the stored transcript): the dropped connection left before
        // its last labels arrived, and the server labelled and stored them at teardown.
        func majority(_ report: StreamReport, from: Double, to: Double) -> [String: String] {
            var counts: [String: [String: Int]] = [:]
            for word in meeting.words where word.startSeconds >= from && word.endSeconds <= to {
                let heard = report.transcript.words.first { $0.text == word.text && abs($0.startSeconds - word.startSeconds) < 0.001 }
                if let label = heard?.speaker { counts[word.speaker, default: [:]][label, default: 0] += 1 }
            }
            return counts.mapValues { $0.max { $0.value < $1.value }!.key }
        }
        let before = majority(second, from: 0, to: cut), after = majority(second, from: cut, to: meeting.durationSeconds)
        #expect(before.count == 2 && Set(before.values).count == 2, "\(before)")
        #expect(after == before, "labels before the reconnect \(before), after \(after)")

        let label = try #require(before[script.speakers[0].id])
        let saved = try server.request("POST", "/v1/conversations/\(first.conversationID)/speakers/\(label.replacingOccurrences(of: " ", with: "%20"))/person?name=Carol", body: [])
        #expect(saved.status == 201, "\(saved.text)")
        let people = try server.json("/v1/people?device_id=phone-r").body["people"] as? [[String: Any]]
        #expect(people?.first?["name"] as? String == "Carol")
        let missing = try server.request("POST", "/v1/conversations/\(first.conversationID)/speakers/Speaker%2099/person", body: [])
        #expect(missing.status == 404 && missing.text.contains("speaker_not_found"))
    }
}
