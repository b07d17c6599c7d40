import Testing
@testable import SpeakerSyncServer

@Suite struct StoredAudioAdmissionTests {
    let admission = StoredAudioAdmission(quotaSecondsPerDevice: 3600, minimumFreeDiskBytes: 1 << 30)

    @Test func withinTheQuotaTheRestIsWhatMayBeStored() {
        #expect(admission.decide(storedSeconds: 600, freeDiskBytes: 10 << 30) == .store(remainingSeconds: 3000))
        #expect(admission.decide(storedSeconds: nil, freeDiskBytes: nil) == .store(remainingSeconds: 3600))
    }

    @Test func aUsedUpQuotaIsRefusedSayingSo() {
        guard case .refuse(let reason) = admission.decide(storedSeconds: 3600, freeDiskBytes: 10 << 30) else {
            Issue.record("not refused"); return
        }
        #expect(reason.contains("quota (1 h)"))
    }

    @Test func aNearlyFullDiskIsRefusedWhateverTheQuota() {
        guard case .refuse(let reason) = admission.decide(storedSeconds: 0, freeDiskBytes: (1 << 30) - 1) else {
            Issue.record("not refused"); return
        }
        #expect(reason.contains("disk is nearly full (under 1024 MiB free)"))
    }

    @Test func zeroMeansNoLimit() {
        let open = StoredAudioAdmission(quotaSecondsPerDevice: 0, minimumFreeDiskBytes: 0)
        #expect(open.decide(storedSeconds: 1e9, freeDiskBytes: 0) == .store(remainingSeconds: nil))
    }

    @Test func theFreeSpaceOfARealFolderIsRead() {
        #expect((StoredAudioAdmission.freeDiskBytes(at: "/tmp") ?? -1) > 0)
        #expect(StoredAudioAdmission.freeDiskBytes(at: "/nonexistent/folder") == nil)
    }
}
