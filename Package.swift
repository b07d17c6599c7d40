// swift-tools-version:6.0
// SpeakerSync: speaker-labelled meeting transcripts over WebSocket, stored in PostgreSQL.
import PackageDescription

let package = Package(
    name: "SpeakerSync",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "speakersync", targets: ["speakersync"]),
        .executable(name: "speakersync-bench", targets: ["speakersync-bench"]),
        // What a device app adds: `import SpeakerSyncKit` (docs/client.md).
        .library(name: "SpeakerSyncKit", targets: ["SpeakerSyncKit"]),
        // Diarization provider plugins: dynamic libraries that the host dlopen()s.
        .library(name: "speakersync-energy", type: .dynamic, targets: ["EnergyBaseline"]),
        .library(name: "speakersync-speakerkit", type: .dynamic, targets: ["SpeakerKit"]),
        .library(name: "speakersync-sherpa-onnx", type: .dynamic, targets: ["SherpaOnnx"]),
        .library(name: "speakersync-falcon", type: .dynamic, targets: ["Falcon"]),
        .library(name: "speakersync-pyannote", type: .dynamic, targets: ["Pyannote"]),
        // The parsers of untrusted input, for the libFuzzer harnesses in Fuzz/ (a package of its own
        // that depends on this one by path and can only use its products).
        .library(name: "SessionProtocol", targets: ["SessionProtocol"]),
        .library(name: "SpeakerSyncAudio", targets: ["SpeakerSyncAudio"]),
        .library(name: "DiarizationScoring", targets: ["DiarizationScoring"]),
        .library(name: "OpusCodec", targets: ["OpusCodec"]),
        .library(name: "WebSocketTransport", targets: ["WebSocketTransport"]),
        .library(name: "SpeakerSyncStore", targets: ["SpeakerSyncStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // MARK: C libraries (one system-library target each)
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CBLAS",
            pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev"])]
        ),
        .systemLibrary(
            name: "CPocketSphinx",
            pkgConfig: "pocketsphinx",
            providers: [.apt(["libpocketsphinx-dev"])]
        ),
        .systemLibrary(
            name: "COpus",
            pkgConfig: "opus",
            providers: [.apt(["libopus-dev"])]
        ),
        .systemLibrary(
            name: "CFLAC",
            pkgConfig: "flac",
            providers: [.apt(["libflac-dev"])]
        ),
        // The plugin ABI: a header-only C target that plugins and the host both include.
        .target(name: "CSpeakerSyncPluginABI"),

        // MARK: Pure logic (no I/O)
        // The vocabulary the server and the device library share (a device's `Word`): no dependency, so
        // the device library's closure (SpeakerSyncKit → SessionProtocol → SpeakerSyncModel) stays pure Swift.
        .target(name: "SpeakerSyncModel"),
        .target(name: "TranscriptMerge", dependencies: ["SpeakerSyncModel"]),
        // The protocol codec both ends use: the server, SpeakerSyncKit and the CLI/eval client.
        .target(name: "SessionProtocol", dependencies: ["SpeakerSyncModel"]),
        .target(name: "SpeakerSyncAudio"),
        .target(name: "DiarizationScoring"),
        // SplitMix64: reproducible randomness for synthesis, dither, k-means starts and tests.
        .target(name: "DeterministicRandom"),
        // Small statistics every layer reports with (percentiles): no dependency of its own.
        .target(name: "Statistics"),
        .target(name: "SpeakerManager", dependencies: [.product(name: "Logging", package: "swift-log")]),
        .target(name: "StreamingDiarization", dependencies: ["SpeakerManager", "DeterministicRandom", "SpeakerSyncAudio", .product(name: "Logging", package: "swift-log")]),

        // MARK: I/O layers
        // CProviderProcess: the wait-status macros and posix_spawn's closefrom, for the embedded cluster's server.
        .target(name: "PostgresClient", dependencies: [
            "CLibPQ", "CProviderProcess", .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "SpeakerSyncStore", dependencies: [
            "FLACCodec", "PostgresClient", "TranscriptMerge", .product(name: "Logging", package: "swift-log"),
        ]),
        // libopus's decoder and encoder (encoding "opus"), and an Ogg Opus demuxer in pure Swift.
        .target(name: "OpusCodec", dependencies: ["COpus"]),
        .target(name: "FLACCodec", dependencies: ["CFLAC"]),
        .target(name: "WebSocketTransport", dependencies: [
            "CLibWebSockets", .product(name: "Logging", package: "swift-log"),
        ]),
        // What every provider host offers (ProviderHost, ProviderSession, descriptors, turns, errors):
        // implemented in process by PluginHost and in workers by ProviderIsolation.
        .target(name: "ProviderInterface"),
        .target(name: "PluginHost", dependencies: [
            "ProviderInterface", "CSpeakerSyncPluginABI", .product(name: "Logging", package: "swift-log"),
        ]),
        // Provider workers: plugins run in child processes the server starts from its own binary
        // (`speakersync provider-worker`), so a crashing or hanging provider fails only its sessions;
        // provider_sandbox.c confines them (docs/security.md, "The provider sandbox").
        .target(name: "CProviderProcess"),
        // Child processes that inherit nothing but their standard descriptors (posix_spawn, closefrom,
        // close-on-exec pipes, pidfds): what the synthesiser, the harnesses and the tests start.
        .target(name: "ChildProcesses", dependencies: ["CProviderProcess"]),
        .target(name: "ProviderIsolation", dependencies: [
            "ProviderInterface", "PluginHost", "CProviderProcess", "ChildProcesses", .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "MeetingSynth", dependencies: ["ChildProcesses", "DeterministicRandom", "SpeakerSyncAudio", "TranscriptMerge", "DiarizationScoring"]),
        // Voice activity detection: sherpa-onnx's C API dlopen'd at run time from vendor/ (never linked).
        .target(name: "CSherpaOnnxVAD"),
        // onnxruntime's C API (the library vendored with sherpa-onnx), dlopen'd by a C shim, and the one
        // Swift file of its calls: the silero VAD run in batches and the pyannote segmentation model.
        .target(name: "COnnxRuntime"),
        .target(name: "OnnxRuntime", dependencies: ["COnnxRuntime"]),
        .target(name: "VoiceActivity", dependencies: ["CSherpaOnnxVAD", "OnnxRuntime", .product(name: "Logging", package: "swift-log")]),
        // sherpa-onnx's speaker embedding extractor and offline (overlap-aware) diarization, from the same
        // dlopen'd library; model files are checked before the library sees them.
        .target(name: "CSherpaOnnxSpeakers"),
        .target(name: "SherpaOnnxSpeakers", dependencies: ["CSherpaOnnxSpeakers", "VoiceActivity"]),
        // The pyannote segmentation model on onnxruntime; the overlap-aware streaming pipeline (docs/pyannote.md).
        .target(name: "SpeakerSegmentation", dependencies: ["OnnxRuntime", "VoiceActivity"]),
        .target(name: "OverlapDiarization", dependencies: [
            "SpeakerSegmentation", "StreamingDiarization", "SpeakerManager", .product(name: "Logging", package: "swift-log"),
        ]),
        // Picovoice Falcon's C library (PyPI pvfalcon, vendored by scripts/setup), dlopen'd; docs/falcon.md.
        .target(name: "CPicovoiceFalcon"),
        .target(name: "PicovoiceFalcon", dependencies: ["CPicovoiceFalcon", "VoiceActivity"]),
        // The LSTM's per-frame recurrent product, vectorised in C (AVX-512 / AVX2 chosen at run time).
        .target(name: "CSpeakerEmbeddingKernels", cSettings: [.unsafeFlags(["-O3"])]),
        .target(name: "SpeakerEmbedding", dependencies: [
            "CBLAS", "CSpeakerEmbeddingKernels", .product(name: "Logging", package: "swift-log"),
        ]),
        // The real VAD and encoder behind StreamingDiarization's protocols (speakerkit and the benchmarks).
        // Expensive single-user resources lent one caller at a time (engines, decoders, recognisers).
        .target(name: "ResourcePooling"),
        .target(name: "DiarizationModels", dependencies: [
            "ResourcePooling", "StreamingDiarization", "SpeakerManager", "SpeakerEmbedding", "VoiceActivity", "SherpaOnnxSpeakers",
            "SpeakerSegmentation", .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "SpeechRecognition", dependencies: [
            "CPocketSphinx", "DeterministicRandom", "ResourcePooling", "SpeakerSyncAudio", "TranscriptMerge",
            .product(name: "Logging", package: "swift-log"),
        ]),

        // MARK: Application
        // The device library: pure Swift plus a socket. On Linux the socket is libwebsockets
        // (WebSocketTransport); on Apple platforms URLSessionWebSocketTask, so nothing from Debian is needed there.
        // Its closure elsewhere is SessionProtocol and SpeakerSyncModel, pure Swift: the messages are
        // encoded and decoded with the server's own codec.
        .target(name: "SpeakerSyncKit", dependencies: [
            "SessionProtocol",
            .target(name: "WebSocketTransport", condition: .when(platforms: [.linux])),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "SpeakerSyncClient", dependencies: [
            "SpeakerSyncKit", "WebSocketTransport", "COpenSSL", "SpeakerSyncAudio", "TranscriptMerge", "DiarizationScoring", "OpusCodec",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "SpeakerSyncServer", dependencies: [
            "TranscriptMerge", "SessionProtocol", "SpeakerSyncAudio", "PostgresClient",
            "SpeakerSyncStore", "WebSocketTransport", "PluginHost", "ProviderIsolation", "COpenSSL", "OpusCodec", "FLACCodec",
            "MeetingSynth", "DiarizationScoring", "SpeechRecognition", "DeterministicRandom", "Statistics",
            .product(name: "Logging", package: "swift-log"),
        ], resources: ["index.html", "console.css", "console.js", "api.js", "charts.js", "microphone.js", "pcm-worklet.js",
                       "transcript-view.js", "providers-tab.js", "live-tab.js", "conversations-tab.js", "test-tab.js",
                       "audio-file.js", "lanes.js", "workbench.js", "upload-form.js", "protocol-log.js", "conversation-list.js"].map {
            // The developer console, compiled in (see ConsoleAssets).
            .embedInCode("Console/Assets/\($0)")
        } + [
            // The API's machine-readable descriptions, compiled in and served (see APIDescriptions).
            .embedInCode("API/openapi.json"), .embedInCode("API/asyncapi.json"),
        ]),
        .target(name: "SpeakerSyncEval", dependencies: [
            "DiarizationScoring", "SpeakerSyncClient", "SpeakerSyncAudio", "WebSocketTransport", "Statistics",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "speakersync", dependencies: [
            "SpeakerSyncServer", "SpeakerSyncClient", "MeetingSynth", "SpeakerSyncEval", "SpeechRecognition", "ProviderIsolation",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The fault-injection harness: `speakersync-bench faults` and a short schedule in the tests.
        .target(name: "FaultInjection", dependencies: [
            "ChildProcesses", "PostgresClient", "SpeakerSyncClient", "SpeakerSyncKit", "SessionProtocol", "MeetingSynth", "WebSocketTransport",
            "DeterministicRandom", "TranscriptMerge", .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "speakersync-bench", dependencies: [
            "ChildProcesses", "FaultInjection",
            "SpeakerSyncServer", "SpeakerSyncClient", "MeetingSynth", "TranscriptMerge", "SpeakerSyncStore", "PostgresClient",
            "VoiceActivity", "SpeakerSyncAudio", "DiarizationModels", "DiarizationScoring", "StreamingDiarization",
            "SpeakerManager", "SpeakerEmbedding", "SpeakerSyncEval", "DeterministicRandom", "PluginHost", "ProviderIsolation",
            "SherpaOnnxSpeakers", "SpeechRecognition", "OverlapDiarization", "SpeakerSegmentation",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // MARK: Provider plugins (built as dynamic libraries, loaded with dlopen)
        .target(
            name: "EnergyBaseline",
            dependencies: ["CSpeakerSyncPluginABI"],
            path: "Plugins/EnergyBaseline"
        ),
        // The C glue of a plugin written in Swift: a provider is a protocol, the tables are built here.
        .target(
            name: "ProviderPluginKit",
            dependencies: ["CSpeakerSyncPluginABI", .product(name: "Logging", package: "swift-log")],
            path: "Plugins/ProviderPluginKit"
        ),
        // The default provider, in Swift: silero VAD + GE2E embeddings + SpeakerManager (docs/speakerkit.md).
        .target(
            name: "SpeakerKit",
            dependencies: [
                "CSpeakerSyncPluginABI", "ProviderPluginKit", "StreamingDiarization", "SpeakerManager", "SpeakerEmbedding",
                "VoiceActivity", "DiarizationModels", "ResourcePooling", "SherpaOnnxSpeakers",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Plugins/SpeakerKit"
        ),
        // Picovoice Falcon: a sliding window live, a pass over the whole session at finalize (docs/falcon.md).
        .target(
            name: "Falcon",
            dependencies: [
                "CSpeakerSyncPluginABI", "ProviderPluginKit", "PicovoiceFalcon", "StreamingDiarization", "DiarizationModels", "ResourcePooling",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Plugins/Falcon"
        ),
        // sherpa-onnx's speaker APIs with the operator's models: live turns, an offline pass at finalize
        // (docs/sherpa-onnx.md).
        .target(
            name: "SherpaOnnx",
            dependencies: [
                "CSpeakerSyncPluginABI", "ProviderPluginKit", "StreamingDiarization", "SpeakerManager", "SherpaOnnxSpeakers",
                "VoiceActivity", "DiarizationModels",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Plugins/SherpaOnnx"
        ),

        // pyannote segmentation-3.0 + CAM++, overlap-aware streaming (docs/pyannote.md).
        .target(
            name: "Pyannote",
            dependencies: [
                "CSpeakerSyncPluginABI", "ProviderPluginKit", "OverlapDiarization", "SpeakerSegmentation", "SherpaOnnxSpeakers",
                "StreamingDiarization", "DiarizationModels", "ResourcePooling", "VoiceActivity",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Plugins/Pyannote"
        ),

        // MARK: Tests (mirror Sources)
        // Shared by the test targets: the per-process PostgreSQL cluster and the test data location.
        .target(name: "TestSupport", dependencies: ["ChildProcesses", "PostgresClient", "SpeakerSyncStore", "FaultInjection", .product(name: "Logging", package: "swift-log")],
                path: "Tests/TestSupport", exclude: ["faulty_plugin.c", "falcon_double.c", "forbidden_plugin.c"]),
        .testTarget(name: "TranscriptMergeTests", dependencies: ["TranscriptMerge", "DeterministicRandom"]),
        .testTarget(name: "SessionProtocolTests", dependencies: ["SessionProtocol", "DeterministicRandom"]),
        .testTarget(name: "SpeakerSyncAudioTests", dependencies: ["ChildProcesses", "SpeakerSyncAudio"]),
        .testTarget(name: "OpusCodecTests", dependencies: ["ChildProcesses", "OpusCodec", "SessionProtocol", "SpeakerSyncAudio", "TestSupport"]),
        .testTarget(name: "FLACCodecTests", dependencies: ["ChildProcesses", "FLACCodec", "SpeakerSyncAudio", "TestSupport", "DeterministicRandom"]),
        .testTarget(name: "PostgresClientTests", dependencies: ["ChildProcesses", "PostgresClient", "TestSupport"]),
        .testTarget(name: "SpeakerSyncStoreTests", dependencies: ["SpeakerSyncStore", "PostgresClient", "TranscriptMerge", "TestSupport", "DeterministicRandom"]),
        .testTarget(name: "SpeakerSyncKitTests", dependencies: ["SpeakerSyncKit", "SessionProtocol", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "WebSocketTransportTests", dependencies: ["ChildProcesses", "WebSocketTransport", "SpeakerSyncClient", "TestSupport"]),
        .testTarget(name: "SpeakerSyncClientTests", dependencies: ["SpeakerSyncClient"]),
        .testTarget(name: "PluginHostTests", dependencies: ["ChildProcesses", "PluginHost", "SpeakerSyncAudio", "TestSupport"]),
        .testTarget(name: "SherpaOnnxSpeakersTests", dependencies: ["SherpaOnnxSpeakers", "TestSupport"]),
        .testTarget(name: "SpeakerSegmentationTests", dependencies: ["SpeakerSegmentation", "SpeakerSyncAudio", "TestSupport"]),
        .testTarget(name: "OverlapDiarizationTests", dependencies: ["OverlapDiarization", "SpeakerSegmentation", "StreamingDiarization", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "DiarizationModelsTests", dependencies: [
            "DiarizationModels", "StreamingDiarization", "SpeakerManager", "SpeakerEmbedding", "VoiceActivity", "SpeakerSyncAudio", "TestSupport", "DeterministicRandom",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "ResourcePoolingTests", dependencies: ["ResourcePooling"]),
        .testTarget(name: "PicovoiceFalconTests", dependencies: ["PicovoiceFalcon", "TestSupport"]),
        .testTarget(name: "ChildProcessesTests", dependencies: ["ChildProcesses"]),
        .testTarget(name: "ProviderPluginKitTests", dependencies: ["ProviderPluginKit"]),
        .testTarget(name: "ProviderIsolationTests", dependencies: [
            "ProviderIsolation", "PluginHost", "SpeakerSyncAudio", "MeetingSynth", "TestSupport", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "MeetingSynthTests", dependencies: ["MeetingSynth"]),
        .testTarget(name: "DiarizationScoringTests", dependencies: ["ChildProcesses", "DiarizationScoring", "DeterministicRandom", "TestSupport"]),
        .testTarget(name: "SpeakerManagerTests", dependencies: ["SpeakerManager", "DeterministicRandom", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "StreamingDiarizationTests", dependencies: [
            "StreamingDiarization", "SpeakerManager", "DeterministicRandom", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "StatisticsTests", dependencies: ["Statistics"]),
        .testTarget(name: "SpeakerSyncEvalTests", dependencies: [
            "SpeakerSyncEval", "DiarizationScoring", "SpeakerSyncClient", "SpeakerSyncAudio", "SpeakerSyncServer",
            "MeetingSynth", "WebSocketTransport", "TestSupport", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "VoiceActivityTests", dependencies: [
            "VoiceActivity", "SpeakerSyncAudio", "SpeakerSyncClient", "TestSupport", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "SpeakerEmbeddingTests", dependencies: [
            "ChildProcesses", "SpeakerEmbedding", "CSpeakerEmbeddingKernels", "SpeakerSyncAudio", "TestSupport", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "SpeechRecognitionTests", dependencies: [
            "ChildProcesses", "SpeechRecognition", "SpeakerSyncAudio", "SpeakerSyncClient", "TestSupport", "MeetingSynth", "DeterministicRandom",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "SpeakerSyncServerTests", dependencies: [
            "ChildProcesses", "SpeakerSyncServer", "SpeakerSyncClient", "MeetingSynth", "WebSocketTransport", "PostgresClient",
            "SpeakerSyncAudio", "SpeakerSyncStore", "TranscriptMerge", "TestSupport", "PluginHost", "SessionProtocol",
            "DeterministicRandom", "OpusCodec", "SpeechRecognition", "DiarizationScoring", "FLACCodec",
        ]),
    ]
)
