// swift-tools-version:6.0
// SpeakerSyncKit on its own: the device library and the two pure-Swift targets it is built on, so an app
// can depend on it without the server's system libraries, plugins and their C targets. The targets are
// the root package's own folders (Sources/* here are symlinks to ../../Sources/*, because SwiftPM refuses
// a target path outside the package root): one copy of the code, built by both manifests.
// docs/client.md says how an app adds it, and what it leaves out on Linux.
import PackageDescription

let package = Package(
    name: "SpeakerSyncKit",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .library(name: "SpeakerSyncKit", targets: ["SpeakerSyncKit"]),
    ],
    dependencies: [
        // The kit logs through swift-log's `Logger`, as the root package does (same lower bound).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "SpeakerSyncModel"),
        .target(name: "SessionProtocol", dependencies: ["SpeakerSyncModel"]),
        // No WebSocketTransport (libwebsockets): `LWSSocketFactory` is behind `#if canImport(WebSocketTransport)`
        // and so is left out here. On Apple platforms the socket is `URLSessionSocketFactory`; on Linux this
        // package has none, and an app passes its own `SessionSocketFactory` (or uses the root package).
        .target(name: "SpeakerSyncKit", dependencies: [
            "SessionProtocol", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "SpeakerSyncKitTests", dependencies: [
            "SpeakerSyncKit", "SessionProtocol", .product(name: "Logging", package: "swift-log"),
        ]),
    ]
)
