import Logging
import Testing
@testable import ProviderIsolation

/// `serve --load-shedding on` (the default) reaches the worker as `--report-backlog`, and only then (the worker
/// reports each push's wait to its plugins only with it).
@Suite struct WorkerBacklogFlagTests {
    func config(reportsBacklog: Bool) -> ProviderWorkerConfig {
        var config = ProviderWorkerConfig(pluginPath: "/plugins/libspeakersync-speakerkit.so", parentPID: 42, protocolVersion: WorkerProtocol.version,
                                          memoryLimitBytes: nil, niceIncrement: 5, logLevel: .error)
        config.reportsBacklog = reportsBacklog
        return config
    }

    @Test func theWorkerIsToldToReportTheBacklogOnlyWhenSheddingIsOn() {
        #expect(config(reportsBacklog: true).arguments.contains("--report-backlog"))
        #expect(!config(reportsBacklog: false).arguments.contains("--report-backlog"))
        #expect(ProviderIsolationConfig.default.reportsBacklog, "on by default (issue 31)")
    }
}
