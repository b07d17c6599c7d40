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
            "SPEAKERSYNC_MODELS=/models", "SWIFT_BACKTRACE=\(WorkerProcessEnvironment.defaultBacktrace)",
        ])
    }

    /// Where the server keeps what plugins must not find is not theirs to know either.
    @Test func theServersFoldersStayWithTheServer() {
        let curated = WorkerProcessEnvironment.curated([
            "SPEAKERSYNC_DATA_DIR=/var/lib/speakersync", "SPEAKERSYNC_SCHEMA_DIR=/usr/share/speakersync/schema",
            "SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL=/models/e.onnx", "TMPDIR=/tmp",
        ], temporaryFolder: "/tmp/speakersync-worker.abc")
        #expect(curated == [
            "SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL=/models/e.onnx", "TMPDIR=/tmp/speakersync-worker.abc",
            "SWIFT_BACKTRACE=\(WorkerProcessEnvironment.defaultBacktrace)",
        ])
    }

    @Test func theOperatorsBacktraceSettingIsKept() {
        let curated = WorkerProcessEnvironment.curated(["SWIFT_BACKTRACE=enable=no", "DATABASE_URL=x"])
        #expect(curated == ["SWIFT_BACKTRACE=enable=no"])
    }
}

/// A provider's config section reaches one plugin file: the first to ask keeps it.
@Suite struct ConfigurationClaimsTests {
    @Test func aSectionNeverReachesTwoPluginFiles() {
        let claims = ConfigurationClaims()
        #expect(claims.grant(["falcon"], to: "/p/libfalcon.so") == (["falcon"], []))
        // The same file again (a restarted or per-session worker) keeps it.
        #expect(claims.grant(["falcon"], to: "/p/libfalcon.so") == (["falcon"], []))
        #expect(claims.grant(["falcon", "energy"], to: "/p/libimpostor.so") == (["energy"], ["falcon"]))
    }
}
