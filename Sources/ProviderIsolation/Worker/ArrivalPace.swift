/// Whether a session's audio reaches the worker at real-time pace, from the server's arrival stamps:
/// only such sessions' waits measure the worker's backlog. A stream sent faster than real time (`eval`
/// at full speed, a resume re-sending what was buffered) waits behind its own audio, which is no
/// overload, and must not make the plugins shed (docs/benchmarks.md, "Load shedding").
///
/// The pace is the audio that arrived over the last `windowSeconds` of arrivals against the time they
/// took, with `burstAllowanceSeconds` of audio allowed on top (a device's catch-up after a stall). So a
/// flood counts as fast from its first second: 25 s of a file sent in half a second is no real-time
/// stream, and its wait behind its own audio must not read as the worker's backlog (before, any
/// stream counted as real time for its first second of arrivals, which is most of a short file sent
/// at full speed). Pure: the worker's reader thread feeds it each push as it reads it.
struct ArrivalPace: Sendable {
    static let windowSeconds = 10.0
    /// Audio beyond the real-time rate that still counts as real time: a short stall's buffered audio.
    static let burstAllowanceSeconds = 3.0
    /// Faster than this many audio seconds per second is not real time. Generous: devices send in bursts
    /// after a stall, and a saturated server stamps real-time audio in bursts too; a full-speed stream
    /// arrives tens of times faster than real time. (1.5 over 5 s was tried: with shedding on at 100
    /// sessions, label p95 7.1 and 7.3 s; 3.0 over 10 s 6.6 s; no filter 7.6 s: run-to-run noise.)
    static let maximumRealTimeRate = 3.0

    private var arrivals: [(seconds: Double, audioSeconds: Double)] = []
    private var head = 0
    private var totalAudioSeconds = 0.0

    /// A push of `audioSeconds` of audio stamped `seconds` (the server's CLOCK_MONOTONIC) on arrival.
    mutating func arrived(audioSeconds: Double, at seconds: Double) {
        totalAudioSeconds += audioSeconds
        arrivals.append((seconds, totalAudioSeconds))
        while head < arrivals.count - 1, arrivals[head].seconds < seconds - Self.windowSeconds { head += 1 }
        if head > 64, head * 2 > arrivals.count {
            arrivals.removeFirst(head)
            head = 0
        }
    }

    /// Whether the audio has been arriving at about real time (a burst within the allowance included).
    var isRealTime: Bool {
        guard let last = arrivals.last, head < arrivals.count else { return true }
        let first = arrivals[head]
        let span = last.seconds - first.seconds
        // The first arrival's own audio came before the span began.
        return last.audioSeconds - first.audioSeconds <= Self.maximumRealTimeRate * span + Self.burstAllowanceSeconds
    }
}
