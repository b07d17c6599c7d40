// swift-tools-version:5.4
// 5.4, not 6: from 5.5 on SwiftPM renames an executable's entry point to `<Target>_main` and links
// `main` to it, which fails here, where libFuzzer's runtime provides `main` and the harness has none.
// libFuzzer harnesses for SpeakerSync's parsers of untrusted input (docs/security.md, "Fuzzing").
//
// A package of its own, as swift-protobuf's FuzzTesting is: every target here is built with
// `-sanitize=fuzzer,address` and has no main (libFuzzer's runtime provides it), which the main
// package's executables and tests must not be. Build and run with scripts/fuzz, or by hand:
//   swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//   .build/debug/FuzzJSONParser Corpus/FuzzJSONParser
import PackageDescription

/// One executable per harness, each a single file in Sources/<name>/.
func harness(_ name: String, _ products: String...) -> Target {
    .executableTarget(name: name, dependencies: products.map { .product(name: $0, package: "SpeakerSync") })
}

let package = Package(
    name: "SpeakerSyncFuzz",
    dependencies: [
        // `name:` so that products are found by this name whatever the checkout's folder is called.
        .package(name: "SpeakerSync", path: ".."),
    ],
    targets: [
        harness("FuzzJSONParser", "SessionProtocol"),
        harness("FuzzClientMessage", "SessionProtocol"),
        harness("FuzzPCMFrameDecoder", "SessionProtocol"),
        harness("FuzzOpusPacket", "SessionProtocol", "OpusCodec"),
        harness("FuzzOggOpusFile", "OpusCodec"),
        harness("FuzzWAVFile", "SpeakerSyncAudio"),
        harness("FuzzRTTM", "DiarizationScoring"),
        harness("FuzzUEM", "DiarizationScoring"),
        harness("FuzzQueryString", "WebSocketTransport"),
        harness("FuzzConversationCursor", "SpeakerSyncStore"),
    ]
)
