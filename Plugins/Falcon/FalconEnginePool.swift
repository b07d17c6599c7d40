import DiarizationModels
import Foundation
import ResourcePooling
import PicovoiceFalcon

/// Falcon engines shared by the provider's sessions, each borrowed for one `process` call. Making an
/// engine activates the AccessKey online, so engines are kept rather than made per session; the first
/// is made here, so a key that cannot activate makes the provider unavailable at load, not a session.
final class FalconEnginePool: Sendable {
    let library: FalconLibrary
    private let pool: ResourcePool<FalconEngine, FalconError>

    init(config: FalconConfig) throws(FalconError) {
        guard let accessKey = config.accessKey else {
            throw FalconError(.invalidConfig, "no Picovoice AccessKey")
        }
        guard FileManager.default.fileExists(atPath: config.modelPath) else {
            throw FalconError(.modelNotFound, "the Falcon model \(config.modelPath) does not exist")
        }
        let library = try FalconLibrary.load(path: config.libraryPath)
        let make = { () throws(FalconError) -> FalconEngine in
            try FalconEngine(library: library, accessKey: accessKey, modelPath: config.modelPath, device: config.device)
        }
        self.library = library
        pool = ResourcePool(first: try make(), maximum: config.engines, make: make)
    }

    /// Falcon's segments of `samples` on a borrowed engine (waits while all are busy).
    func process(_ samples: UnsafeBufferPointer<Float>) throws(FalconError) -> [FalconSegment] {
        try pool.withResource { (engine) throws(FalconError) in try engine.process(samples) }
    }
}
