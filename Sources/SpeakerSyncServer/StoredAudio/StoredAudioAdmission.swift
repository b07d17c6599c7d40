import Foundation

/// Whether a session may keep (more of) its audio (`store_audio`): a device's stored audio over all
/// its conversations is bounded by a quota, and the disk holding the data keeps a free-space
/// watermark, so one device cannot fill the disk (issue 28: 655 s of 48 kHz audio were stored in
/// 3.6 s, without limit). Refusing costs the device only the recording: the session goes on and its
/// words are stored; it is told once with a non-fatal `audio_not_stored`.
struct StoredAudioAdmission: Sendable, Equatable {
    enum Decision: Sendable, Equatable {
        /// Store up to this many more seconds (nil: no quota).
        case store(remainingSeconds: Double?)
        /// Do not store; the reason goes to the device.
        case refuse(reason: String)
    }

    /// 0 or less: no quota.
    var quotaSecondsPerDevice: Double
    /// 0 or less: no watermark.
    var minimumFreeDiskBytes: Int64

    /// `storedSeconds`: what the device has stored (nil: unknown, not counted); `freeDiskBytes`: free
    /// space on the data's disk (nil: unknown, e.g. an external PostgreSQL).
    func decide(storedSeconds: Double?, freeDiskBytes: Int64?) -> Decision {
        if let reason = diskRefusal(freeDiskBytes: freeDiskBytes) { return .refuse(reason: reason) }
        guard quotaSecondsPerDevice > 0 else { return .store(remainingSeconds: nil) }
        let remaining = quotaSecondsPerDevice - (storedSeconds ?? 0)
        guard remaining > 0 else { return .refuse(reason: quotaReason) }
        return .store(remainingSeconds: remaining)
    }

    /// Why the disk takes no more audio; nil while it is above the watermark (or its space is unknown).
    func diskRefusal(freeDiskBytes: Int64?) -> String? {
        guard minimumFreeDiskBytes > 0, let free = freeDiskBytes, free < minimumFreeDiskBytes else { return nil }
        return "the server's disk is nearly full (under \(Self.mebibytes(minimumFreeDiskBytes)) MiB free); the session goes on without storing its audio"
    }

    var quotaReason: String {
        "this device's stored audio has reached its quota (\(String(format: "%g", quotaSecondsPerDevice / 3600)) h); the session goes on without storing its audio (delete conversations to make room)"
    }

    static func mebibytes(_ bytes: Int64) -> Int64 { bytes >> 20 }

    /// Free bytes for an unprivileged writer on the file system holding `path`; nil when it cannot be read.
    static func freeDiskBytes(at path: String) -> Int64? {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return nil }
        return Int64(status.f_bavail) * Int64(status.f_frsize)
    }
}
