import FaultInjection
import Foundation
import Logging
import Testing
import TestSupport

/// The fault harness's short schedule (every kind of fault once) against the real server, a
/// PostgreSQL of its own, real plugins and synthesised meetings: no acknowledged word lost or
/// duplicated, no 1000 close with anything unstored, no conversation left active, every
/// SpeakerSyncKit device finalized with all its words, no job vanished. The long schedule is the
/// benchmark (`speakersync-bench faults`, docs/reliability.md).
@Suite(.serialized) struct FaultInjectionTests {
    @Test func theShortScheduleBreaksNoPromise() async throws {
        var logger = Logger(label: "faults")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-faults-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: folder) }
        var config = FaultRunConfig(schedule: .short, devices: FaultRunConfig.standardDevices(heavy: false), workDirectory: folder,
                                    serverExecutable: try ServerUnderTest.siblingExecutable())
        config.speed = 2
        // A debug build; the bound is the one docs/reliability.md gives for it.
        config.serverResidentBoundBytes = 1 << 30
        let report = try await FaultRun(config: config, logger: logger) { print("faults: \($0)") }.run()
        print(report.table)
        // A failing device's story from the server's side, before the folder goes.
        if !report.kitFailures.isEmpty, let log = try? String(contentsOf: folder.appendingPathComponent("server.log"), encoding: .utf8) {
            for failure in report.kitFailures {
                let id = failure.prefix { $0 != ":" }
                for line in log.split(separator: "\n") where line.contains(id) { print("server: \(line)") }
            }
        }
        #expect(report.totalFaults == FaultSchedule.short.steps.count)
        #expect(report.wordsAcknowledged > 0)
        #expect(report.wordsLost.isEmpty, "\(report.wordsLost.prefix(5))")
        #expect(report.duplicates.isEmpty, "\(report.duplicates.prefix(5))")
        #expect(report.lostAfterFinalizedClose.isEmpty, "\(report.lostAfterFinalizedClose.prefix(5))")
        #expect(report.activeConversations.isEmpty, "\(report.activeConversations.prefix(5))")
        #expect(report.kitFailures.isEmpty, "\(report.kitFailures.prefix(5))")
        #expect(report.kitSessions > 0 && report.rawSessions > 0)
        #expect(report.jobs > 0, "no re-diarization was queued across a restart")
        #expect(report.vanishedJobs.isEmpty, "\(report.vanishedJobs)")
        #expect(report.hostileWordsRefused > 0)
        #expect(report.serverPeakResidentBytes <= report.serverResidentBoundBytes)
    }
}
