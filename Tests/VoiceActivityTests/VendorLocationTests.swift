import Foundation
import Testing
import VoiceActivity

@Suite("where the vendored library and model are found")
struct VendorLocationTests {
    @Test func environmentWins() {
        let environment = ["SPEAKERSYNC_SHERPA_LIB": "/opt/sherpa/lib", "SPEAKERSYNC_MODELS": "/opt/models"]
        #expect(VendorLocation.sherpaLibraryDirectory(environment: environment, searchRoots: []) == "/opt/sherpa/lib")
        #expect(VendorLocation.sileroModelPath(environment: environment, searchRoots: []) == "/opt/models/silero_vad.onnx")
    }

    @Test func vendorFolderFoundWalkingUp() throws {
        let root = (NSTemporaryDirectory() as NSString).appendingPathComponent("speakersync-vendor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let files = FileManager.default
        try files.createDirectory(atPath: "\(root)/vendor/sherpa-onnx/lib", withIntermediateDirectories: true)
        try files.createDirectory(atPath: "\(root)/vendor/models", withIntermediateDirectories: true)
        try files.createDirectory(atPath: "\(root)/.build/release", withIntermediateDirectories: true)
        files.createFile(atPath: "\(root)/vendor/sherpa-onnx/lib/libsherpa-onnx-c-api.so", contents: Data())
        files.createFile(atPath: "\(root)/vendor/models/silero_vad.onnx", contents: Data())
        let roots = ["/nonexistent-speakersync-root", "\(root)/.build/release"]
        #expect(VendorLocation.sherpaLibraryDirectory(environment: [:], searchRoots: roots) == "\(root)/vendor/sherpa-onnx/lib")
        #expect(VendorLocation.sileroModelPath(environment: [:], searchRoots: roots) == "\(root)/vendor/models/silero_vad.onnx")
    }

    /// Nothing found: the path scripts/setup would create, under the current directory, so errors name it.
    @Test func fallbackIsTheSetupPath() {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(VendorLocation.sherpaLibraryDirectory(environment: [:], searchRoots: []) == "\(cwd)/vendor/sherpa-onnx/lib")
        #expect(VendorLocation.sileroModelPath(environment: [:], searchRoots: []) == "\(cwd)/vendor/models/silero_vad.onnx")
    }
}
