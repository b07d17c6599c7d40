import Testing
@testable import ProviderIsolation

/// A provider worker starts with the variables it may need, never the server's secrets.
@Suite struct WorkerProcessEnvironmentTests {
    @Test func secretsStayWithTheServer() {
        let inherited = [
            "PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8", "LC_NUMERIC=C", "TZ=UTC", "OPENBLAS_NUM_THREADS=1",
            "SPEAKERSYNC_MODELS=/models", "SPEAKERSYNC_PROVIDER_CONFIG=/etc/speakersync/providers.json",
            "PICOVOICE_ACCESS_KEY=pv", "SPEAKERSYNC_ADMIN_KEY=ssa_secret", "SPEAKERSYNC_TOKEN=sst_secret",
            "DATABASE_URL=postgresql://u:pw@db/x", "PGPASSWORD=pw", "AWS_SECRET_ACCESS_KEY=aws", "LD_PRELOAD=/tmp/x.so",
            "NOT_AN_ENTRY",
        ]
        let curated = WorkerProcessEnvironment.curated(inherited)
        #expect(curated == [
            "PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8", "LC_NUMERIC=C", "TZ=UTC", "OPENBLAS_NUM_THREADS=1",
            "SPEAKERSYNC_MODELS=/models", "SPEAKERSYNC_PROVIDER_CONFIG=/etc/speakersync/providers.json",
            "PICOVOICE_ACCESS_KEY=pv", "SWIFT_BACKTRACE=\(WorkerProcessEnvironment.defaultBacktrace)",
        ])
    }

    @Test func theOperatorsBacktraceSettingIsKept() {
        let curated = WorkerProcessEnvironment.curated(["SWIFT_BACKTRACE=enable=no", "DATABASE_URL=x"])
        #expect(curated == ["SWIFT_BACKTRACE=enable=no"])
    }
}
