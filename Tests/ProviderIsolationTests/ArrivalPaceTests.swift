import Testing
@testable import ProviderIsolation

/// Which sessions' waits count as the worker's backlog: audio arriving at real time does, audio sent
/// faster does not (even briefly), a short burst after a stall does not make a session "fast", and a session that
/// slows back to real time counts again once its fast arrivals leave the window.
struct ArrivalPaceTests {
    /// 100 ms pushes at `rate` audio seconds per second, from `start` for `seconds` of wall time.
    static func feed(_ pace: inout ArrivalPace, rate: Double, from start: Double, seconds: Double) -> Double {
        let interval = 0.1 / rate
        var time = start
        while time < start + seconds {
            pace.arrived(audioSeconds: 0.1, at: time)
            time += interval
        }
        return time
    }

    @Test func realTimeCountsAndFasterDoesNot() {
        var realTime = ArrivalPace()
        _ = Self.feed(&realTime, rate: 1, from: 100, seconds: 20)
        #expect(realTime.isRealTime)
        var fast = ArrivalPace()
        _ = Self.feed(&fast, rate: 20, from: 100, seconds: 3)
        #expect(!fast.isRealTime)
    }

    /// A flood is fast from its first half second (25 s of audio), while a start's first few pushes,
    /// close together, are not.
    @Test func aBriefFloodIsFastAndAFewPushesAreNot() {
        var flood = ArrivalPace()
        _ = Self.feed(&flood, rate: 50, from: 100, seconds: 0.5)
        #expect(!flood.isRealTime)
        var start = ArrivalPace()
        for _ in 0 ..< 5 { start.arrived(audioSeconds: 0.1, at: 100) }
        #expect(start.isRealTime)
    }

    @Test func aBurstAfterAStallIsStillRealTime() {
        var pace = ArrivalPace()
        var time = Self.feed(&pace, rate: 1, from: 100, seconds: 10)
        // A 2 s network stall, then the 2 s the device buffered arrive at once, then real time again.
        time += 2
        for _ in 0 ..< 20 { pace.arrived(audioSeconds: 0.1, at: time) }
        _ = Self.feed(&pace, rate: 1, from: time, seconds: 1)
        #expect(pace.isRealTime)
    }

    @Test func aStreamThatSlowsDownCountsAgain() {
        var pace = ArrivalPace()
        let time = Self.feed(&pace, rate: 10, from: 100, seconds: 3)
        #expect(!pace.isRealTime)
        _ = Self.feed(&pace, rate: 1, from: time, seconds: ArrivalPace.windowSeconds + 1)
        #expect(pace.isRealTime)
    }
}
