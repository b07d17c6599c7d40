import Testing
@testable import SpeakerSyncServer

/// Where a resume asks the device to continue its audio (`LiveSession.resumeOffsetSeconds`).
@Suite struct ResumeOffsetTests {
    @Test func withoutServerDiarizationTheStoredAudioEndIsTheResumePoint() {
        #expect(LiveSession.resumeOffsetSeconds(storedAudioSeconds: 42, turnEnds: [10, 30], rediarizesGap: false) == 42)
    }

    @Test func aServerDiarizedResumeGoesBackToTheEndOfTheLastStoredTurn() {
        // The provider had heard 42 s but its turns reached only 37.5 s when the server died.
        #expect(LiveSession.resumeOffsetSeconds(storedAudioSeconds: 42, turnEnds: [12, 37.5, 20], rediarizesGap: true) == 37.5)
    }

    @Test func turnsReachingTheAudioEndLeaveNothingToRediarize() {
        #expect(LiveSession.resumeOffsetSeconds(storedAudioSeconds: 42, turnEnds: [42.3], rediarizesGap: true) == 42)
    }

    @Test func theRewindIsBoundedSoALongSilenceIsNotSentAgain() {
        let offset = LiveSession.resumeOffsetSeconds(storedAudioSeconds: 600, turnEnds: [5], rediarizesGap: true)
        #expect(offset == 600 - LiveSession.maxRediarizedSeconds)
        #expect(LiveSession.resumeOffsetSeconds(storedAudioSeconds: 20, turnEnds: [], rediarizesGap: true) == 0)
    }
}
