import Foundation

/// Falcon engines shared by a provider's sessions: made as needed up to `config.engines`, each borrowed
/// for one `process` call. Making an engine activates the AccessKey online, so engines are kept rather
/// than made per session. The first is made in init, so a key that cannot activate makes the provider
/// unavailable at load, not a session.
public final class FalconEnginePool: @unchecked Sendable {
    public let library: FalconLibrary
    private let config: FalconConfig
    private let accessKey: String
    private let condition = NSCondition()
    private var idle: [FalconEngine] = []
    private var made = 0

    public init(config: FalconConfig) throws(FalconError) {
        guard let accessKey = config.accessKey else {
            throw FalconError(.invalidConfig, "no Picovoice AccessKey")
        }
        guard FileManager.default.fileExists(atPath: config.modelPath) else {
            throw FalconError(.modelNotFound, "the Falcon model \(config.modelPath) does not exist")
        }
        self.config = config
        self.accessKey = accessKey
        library = try FalconLibrary.load(path: config.libraryPath)
        idle.append(try FalconEngine(library: library, accessKey: accessKey, modelPath: config.modelPath, device: config.device))
        made = 1
    }

    /// `process` on a borrowed engine (waits while all `config.engines` are busy).
    public func process(_ samples: UnsafeBufferPointer<Float>) throws(FalconError) -> [FalconSegment] {
        let engine = try take()
        defer { giveBack(engine) }
        return try engine.process(samples)
    }

    private func take() throws(FalconError) -> FalconEngine {
        condition.lock()
        while idle.isEmpty && made >= config.engines { condition.wait() }
        if let engine = idle.popLast() {
            condition.unlock()
            return engine
        }
        made += 1
        condition.unlock()
        do {
            return try FalconEngine(library: library, accessKey: accessKey, modelPath: config.modelPath, device: config.device)
        } catch {
            condition.lock()
            made -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func giveBack(_ engine: FalconEngine) {
        condition.lock()
        idle.append(engine)
        condition.signal()
        condition.unlock()
    }
}
