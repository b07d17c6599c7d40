import Foundation
import Testing
@testable import MeetingSynth

/// Backchannels: short replies said over someone else's turn without taking the floor.
@Suite struct BackchannelTests {
    @Test func theScriptKeepsItsRegularTurnsAndAddsRepliesByListeners() throws {
        let plain = try MeetingScript.generate(seed: 11, speakerCount: 3, turnCount: 12)
        let plan = BackchannelPlan(probability: 0.6, listenerCount: 1)
        let script = try MeetingScript.generate(seed: 11, speakerCount: 3, turnCount: 12, backchannels: plan)
        #expect(script.turns.filter { !$0.isBackchannel } == plain.turns)
        #expect(script.speakers.prefix(3).elementsEqual(plain.speakers))
        #expect(script.speakers.count == 4)
        let replies = script.turns.filter(\.isBackchannel)
        #expect(!replies.isEmpty)
        // The listener says nothing but backchannels, each one or two reply words.
        #expect(Set(replies.map(\.speaker)) == ["spk4"])
        #expect(replies.allSatisfy { (1 ... 2).contains($0.words.count) && $0.words.allSatisfy(BackchannelPlan.replies.contains) })
        // A reply always follows a regular turn.
        #expect(script.turns.first?.isBackchannel == false)
        for (a, b) in zip(script.turns, script.turns.dropFirst()) where b.isBackchannel { #expect(!a.isBackchannel) }

        // Without listeners, the replies are the other participants'.
        let among = try MeetingScript.generate(seed: 11, speakerCount: 3, turnCount: 12, backchannels: BackchannelPlan(probability: 0.6))
        #expect(among.speakers == plain.speakers)
        for (a, b) in zip(among.turns, among.turns.dropFirst()) where b.isBackchannel { #expect(a.speaker != b.speaker) }
        #expect(throws: SynthError.self) {
            _ = try MeetingScript.generate(seed: 1, speakerCount: 6, turnCount: 4, backchannels: BackchannelPlan(probability: 0.5, listenerCount: 1))
        }
    }

    @Test func repliesLieInsideAnotherTurnAndLeaveTheRegularTimingAsItWas() throws {
        let plain = try MeetingScript.generate(seed: 5, speakerCount: 2, turnCount: 6)
        let script = try MeetingScript.generate(seed: 5, speakerCount: 2, turnCount: 6,
                                                backchannels: BackchannelPlan(probability: 1, listenerCount: 1))
        let synthesizer = MeetingSynthesizer()
        let without = try synthesizer.synthesize(plain, seed: 5)
        let with = try synthesizer.synthesize(script, seed: 5)
        let regular = with.turns.filter { $0.speaker != "spk3" }
        #expect(regular == without.turns)
        let replies = with.turns.filter { $0.speaker == "spk3" }
        #expect(replies.count == 6)
        for reply in replies {
            // Said over a turn of someone else, starting inside it.
            #expect(regular.contains { $0.startSeconds < reply.startSeconds && reply.startSeconds < $0.endSeconds })
        }
        #expect(with.words.filter { $0.speaker == "spk3" }.count == script.turns.filter(\.isBackchannel).reduce(0) { $0 + $1.words.count })
        // The regular words are where they were; the replies add to the mix.
        #expect(with.words.filter { $0.speaker != "spk3" } == without.words)
        #expect(with.audio != without.audio)
    }

    @Test func scriptsWithoutRepliesEncodeAsBefore() throws {
        let turn = MeetingTurn(speaker: "a", words: ["hello"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(turn), as: UTF8.self) == #"{"speaker":"a","words":["hello"]}"#)
        let reply = MeetingTurn(speaker: "b", words: ["yeah"], isBackchannel: true)
        let encoded = try encoder.encode(reply)
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"backchannel":true,"speaker":"b","words":["yeah"]}"#)
        #expect(try JSONDecoder().decode(MeetingTurn.self, from: encoded) == reply)
        #expect(try JSONDecoder().decode(MeetingTurn.self, from: Data(#"{"speaker":"a","words":["hello"]}"#.utf8)) == turn)
    }
}
