import DiarizationScoring
import Foundation
import MeetingSynth
import SpeakerSyncAudio
import TranscriptMerge

/// A synthesised meeting with its exact truth, as a test recording streams and scores it.
///
/// It is the meeting `speakersync synth` writes for the same seed (`MeetingSet`'s first meeting),
/// taken through the same encodings as its files (16-bit WAV, RTTM and UEM at millisecond
/// precision) so that a seed scores as it did when the recordings were read back from those files
/// (and as `speakersync eval` scores the files), without writing them.
struct TestMeeting: Sendable {
    /// The file id of `MeetingSet` (`test-<recording id>-00`): the RTTM's, kept for the log.
    let id: String
    let audio: AudioBuffer
    /// What the device sends as its ASR words, in time order.
    let words: [Word]
    /// Reference speaker turns.
    let reference: [SpeakerSegment]
    /// The whole meeting: the scored region.
    let uem: [TimeSpan]
    /// `words` with their true speakers (the synthesiser knows who said each).
    let referenceWords: [ScoredWord]

    var audioSeconds: Double { audio.durationSeconds }

    /// Synthesises the meeting of `request` (espeak-ng, as `speakersync synth` does).
    static func synthesise(_ request: TestRecordingRequest, recordingID: String) throws -> TestMeeting {
        let set = MeetingSetConfig(speakerCount: request.speakerCount, meetingCount: 1, turnCount: request.turnCount,
                                   seed: request.seed, namePrefix: "test-\(recordingID)")
        let id = String(format: "%@-%02d", set.namePrefix, 0)
        let script = try MeetingScript.generate(seed: set.seed, speakerCount: set.speakerCount, turnCount: set.turnCount)
        let meeting = try MeetingSynthesizer(config: set.synth).synthesize(script, seed: set.seed)
        let audio = try WAVFile.decode(meeting.wavData())
        let reference = try RTTM.parse(meeting.rttm(fileID: id))[id] ?? []
        let uem = try UEM.parse(String(format: "%@ 1 0.000 %.3f\n", id, meeting.durationSeconds))[id] ?? []
        // In time order, as `speakersync eval` orders a words file.
        let spoken = meeting.wordsByStart.sorted { ($0.startSeconds, $0.endSeconds) < ($1.startSeconds, $1.endSeconds) }
        let words = spoken.map { Word(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let referenceWords = ReferenceWordLabels.label(
            words.map { (text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }, reference: reference,
            trueSpeakers: spoken.map(\.speaker))
        return TestMeeting(id: id, audio: audio, words: words, reference: reference, uem: uem, referenceWords: referenceWords)
    }
}
