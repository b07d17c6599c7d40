/// How much of the server's background work one device may hold at once, so a device that keeps
/// asking cannot take every place and starve the others (the server-wide pools are small: four
/// re-diarizations waiting or running, two test recordings running). The admin key is not a device:
/// its requests are bounded by the pools only. The operator raises the shares with
/// `serve --max-jobs-per-device` and `--max-test-recordings-per-device` (docs/security.md).
public struct JobShareConfig: Sendable, Equatable {
    /// Re-diarization jobs of one device's conversations waiting or running at once.
    public var rediarizationsPerDevice: Int
    /// Test recordings of one device running at once.
    public var testRecordingsPerDevice: Int

    public init(rediarizationsPerDevice: Int = 1, testRecordingsPerDevice: Int = 1) {
        self.rediarizationsPerDevice = rediarizationsPerDevice
        self.testRecordingsPerDevice = testRecordingsPerDevice
    }

    public static let `default` = JobShareConfig()
}
