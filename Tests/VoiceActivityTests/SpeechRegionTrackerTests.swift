import Testing
import VoiceActivity

/// The bookkeeping alone, with sherpa-onnx's events played by hand (16 kHz, 512-sample windows,
/// 64 samples of model context, 1000 samples of onset lookback, 100 samples of padding).
@Suite("SpeechRegionTracker")
struct SpeechRegionTrackerTests {
    static func tracker() -> SpeechRegionTracker {
        SpeechRegionTracker(
            sampleRate: 16_000, windowSizeSamples: 512, modelContextSamples: 64, onsetLookbackSamples: 1000, padSamples: 100)
    }

    static func feed(_ tracker: inout SpeechRegionTracker, windows: Int, speech: Bool) {
        for _ in 0..<windows {
            tracker.received(sampleCount: 512)
            tracker.windowFed(speechDetected: speech)
        }
    }

    @Test func theModelClassifiesAWindowOnceTheNextArrives() {
        var tracker = Self.tracker()
        Self.feed(&tracker, windows: 1, speech: false)
        #expect(tracker.analyzedSamples == 0)
        Self.feed(&tracker, windows: 1, speech: false)
        #expect(tracker.analyzedSamples == 512)
        Self.feed(&tracker, windows: 3, speech: false)
        #expect(tracker.analyzedSamples == 4 * 512)
        #expect(tracker.receivedSamples == 5 * 512)
    }

    @Test func onsetLooksBackButNotBeforeTheLastSegment() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, windows: 10, speech: false)  // analyzed 9 × 512 = 4608
        Self.feed(&tracker, windows: 1, speech: true)  // analyzed 5120
        #expect(tracker.ongoingStartSample == 5120 - 1000)
        #expect(tracker.ongoingSpeechStartSeconds == Double(5120 - 1000 - 100) / 16_000)
        Self.feed(&tracker, windows: 5, speech: true)
        #expect(tracker.ongoingStartSample == 4120)  // fixed at the onset
        Self.feed(&tracker, windows: 1, speech: false)
        #expect(!tracker.isSpeechActive)
        let closedNow = tracker.closed(startSample: 4120, sampleCount: 3530, limitSample: tracker.analyzedSamples)
        let closed = try #require(closedNow)
        #expect(closed == SpeechSegment(startSeconds: 4020 / 16_000.0, endSeconds: 7750 / 16_000.0))
        Self.feed(&tracker, windows: 1, speech: true)  // analyzed 17 × 512 = 8704
        #expect(tracker.ongoingStartSample == 8704 - 1000)
        #expect(tracker.ongoingSpeechStartSeconds == 7750 / 16_000.0)  // padding stops at the previous segment
    }

    @Test func onsetRightAfterASegmentStartsAtItsEnd() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, windows: 20, speech: false)
        let closedNow = tracker.closed(startSample: 2000, sampleCount: 7000, limitSample: tracker.analyzedSamples)
        _ = try #require(closedNow)
        Self.feed(&tracker, windows: 1, speech: true)  // analyzed 20 × 512 = 10240; lookback 9240 ≥ 9000
        #expect(tracker.ongoingStartSample == 9240)
        var near = Self.tracker()
        Self.feed(&near, windows: 20, speech: false)
        let nearClosed = near.closed(startSample: 2000, sampleCount: 7900, limitSample: near.analyzedSamples)
        _ = try #require(nearClosed)
        Self.feed(&near, windows: 1, speech: true)
        #expect(near.ongoingStartSample == 9900)  // boundary, not 9240
    }

    @Test func endPaddingStopsAtTheLimit() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, windows: 10, speech: false)
        let closedNow = tracker.closed(startSample: 50, sampleCount: 4000, limitSample: 4050)
        let closed = try #require(closedNow)
        #expect(closed == SpeechSegment(startSeconds: 0, endSeconds: 4050 / 16_000.0))
    }

    @Test func segmentAlreadyInsideThePreviousPaddingIsDropped() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, windows: 10, speech: false)
        let closedNow = tracker.closed(startSample: 1000, sampleCount: 1000, limitSample: 5000)
        _ = try #require(closedNow)  // padded to 2100
        let second = tracker.closed(startSample: 2000, sampleCount: 50, limitSample: 2100)
        #expect(second == nil)
    }

    @Test func flushMovesTheBoundaryOnlyWhenSpeechWasOpen() {
        var open = Self.tracker()
        Self.feed(&open, windows: 10, speech: true)
        open.flushed()
        #expect(!open.isSpeechActive)
        Self.feed(&open, windows: 1, speech: true)
        #expect(open.ongoingStartSample == 9 * 512)  // sherpa-onnx's buffer was emptied up to the flush point

        var quiet = Self.tracker()
        Self.feed(&quiet, windows: 10, speech: false)
        quiet.flushed()
        Self.feed(&quiet, windows: 1, speech: true)
        #expect(quiet.ongoingStartSample == 10 * 512 - 1000)
    }
}
