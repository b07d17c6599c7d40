/// A clock grid shared by every streamer of a process (`DeviceStreamConfig.pacingTickSeconds`):
/// due times rounded up to its ticks, so sessions due within one tick wake at the same instant.
enum PacingGrid {
    /// The grid's origin: any instant works as long as every streamer uses the same one.
    static let origin = ContinuousClock.now

    /// The first tick at or after `due`; `due` itself when `tickSeconds` is nil or not positive.
    static func tick(atOrAfter due: ContinuousClock.Instant, tickSeconds: Double?) -> ContinuousClock.Instant {
        guard let tickSeconds, tickSeconds > 0 else { return due }
        let sinceOrigin = (due - origin).seconds
        let ticks = (sinceOrigin / tickSeconds).rounded(.up)
        return origin + .seconds(ticks * tickSeconds)
    }
}
