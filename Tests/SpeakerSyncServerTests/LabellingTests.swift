import ProviderInterface
import SpeakerSyncStore
import Testing
import TranscriptMerge
@testable import SpeakerSyncServer

/// `Labelling.apply`: how a provider instance's turns become stored turns, session labels and
/// word speakers, for the session's own provider, shadows and re-diarizations alike.
@Suite struct LabellingTests {
    static func labelling(provider: String = "speakerkit", instance: String = "a1b2c3d4", offsetSeconds: Double = 0,
                          speakers: SpeakerRegistry = SpeakerRegistry()) -> Labelling {
        var merger = TranscriptMerger(config: .default)
        _ = merger.upsertResult(id: "r1", words: [
            Word(text: "hello", startSeconds: offsetSeconds + 0.2, endSeconds: offsetSeconds + 0.6),
            Word(text: "there", startSeconds: offsetSeconds + 2.2, endSeconds: offsetSeconds + 2.6),
        ], isFinal: true)
        return Labelling(source: .live, scope: ProviderInstanceScope(provider: provider, instance: instance, offsetSeconds: offsetSeconds),
                         merger: merger, speakers: speakers)
    }

    static func turn(_ id: UInt64, speaker: Int32, _ start: Double, _ end: Double, removed: Bool = false) -> ProviderTurn {
        ProviderTurn(turnID: id, speaker: speaker, startSeconds: start, endSeconds: end, confidence: 0.9, isRemoved: removed)
    }

    @Test func turnsGetScopedIdsKeysAndTheConversationTimeline() {
        var labelling = Self.labelling(offsetSeconds: 30)
        let change = labelling.apply([Self.turn(7, speaker: 0, 0, 1), Self.turn(8, speaker: 3, 2, 3)])
        #expect(change.upsertedTurns.map(\.id) == ["speakerkit:a1b2c3d4:7", "speakerkit:a1b2c3d4:8"])
        #expect(change.upsertedTurns.map(\.startSeconds) == [30, 32])
        #expect(change.upsertedTurns.map(\.speaker) == ["Speaker 1", "Speaker 2"])
        #expect(change.keyLabels == ["speakerkit/a1b2c3d4:0": "Speaker 1", "speakerkit/a1b2c3d4:3": "Speaker 2"])
        #expect(change.speakers.map(\.label) == ["Speaker 1", "Speaker 2"])
        #expect(labelling.merger.words.map(\.speaker) == ["Speaker 1", "Speaker 2"])
        #expect(change.delta.changedWords.count == 2)
    }

    @Test func aWithdrawnTurnIsRemovedByItsStoredId() {
        var labelling = Self.labelling()
        _ = labelling.apply([Self.turn(1, speaker: 0, 0, 1), Self.turn(2, speaker: 1, 2, 3)])
        let change = labelling.apply([Self.turn(2, speaker: 1, 0, 0, removed: true)])
        #expect(change.removedTurnIDs == ["speakerkit:a1b2c3d4:2"])
        #expect(change.upsertedTurns.isEmpty && change.speakers.isEmpty)
        #expect(labelling.merger.turns.map(\.id) == ["speakerkit:a1b2c3d4:1"])
    }

    @Test func anEnrolledPersonNamesTheNewSpeakerOrJoinsTheirExistingOne() throws {
        var labelling = Self.labelling()
        labelling.people[1_000_000] = "Alice"
        let first = labelling.apply([Self.turn(1, speaker: 1_000_000, 0, 1)])
        #expect(first.speakers.map(\.name) == ["Alice"])
        // A later instance (a resume) reporting Alice under its own index joins the same speaker.
        var resumed = Self.labelling(instance: "e5f6a7b8", speakers: labelling.speakers)
        resumed.people[1_000_000] = "Alice"
        let second = resumed.apply([Self.turn(1, speaker: 1_000_000, 2, 3)])
        #expect(second.speakers.isEmpty)
        #expect(second.upsertedTurns.map(\.speaker) == ["Speaker 1"])
        #expect(second.keyLabels == ["speakerkit/e5f6a7b8:1000000": "Speaker 1"])
    }

    @Test func instanceSpeakersFollowMergesForVoiceProfiles() throws {
        var labelling = Self.labelling()
        labelling.bind(2_000_000, to: "Speaker 9") // not a label the conversation has: ignored
        _ = labelling.apply([Self.turn(1, speaker: 0, 0, 1), Self.turn(2, speaker: 1, 2, 3)])
        _ = try labelling.speakers.merge("Speaker 2", into: "Speaker 1")
        let resolved = Dictionary(uniqueKeysWithValues: labelling.resolvedInstanceSpeakers.map { ($0.speaker, $0.label) })
        #expect(resolved == [0: "Speaker 1", 1: "Speaker 1"])
    }

    @Test func eachTurnRemembersTheProviderThatMadeIt() {
        var labelling = Self.labelling(provider: "device-switch")
        _ = labelling.upsertTurns([SpeakerTurn(id: "device:200:speaker90", speaker: "Speaker 1", startSeconds: 0, endSeconds: 1)], provider: "device")
        let change = labelling.apply([Self.turn(5, speaker: 0, 2, 3)])
        #expect(labelling.provider(ofTurn: "device:200:speaker90") == "device")
        #expect(labelling.provider(ofTurn: change.upsertedTurns[0].id) == "device-switch")
    }

    @Test func aStoppedLabellingIsStoredIncompleteWithItsReason() {
        var labelling = Self.labelling()
        _ = labelling.apply([Self.turn(1, speaker: 0, 0, 3)])
        labelling.stop(reason: "fell 12 s behind")
        let record = labelling.record(audioSeconds: 3, interruptedReason: nil)
        #expect(!record.isComplete && record.statusReason == "fell 12 s behind")
        #expect(record.words.map(\.speaker) == ["Speaker 1", "Speaker 1"])
    }
}
