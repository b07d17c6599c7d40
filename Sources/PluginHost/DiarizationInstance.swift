import CSpeakerSyncPluginABI
import Logging
import Synchronization

/// One provider instance, owned by one session.
///
/// Threading rule (the ABI's): use an instance from ONE serial queue at a time — the session's. It is
/// `@unchecked Sendable` only so it can be created on one thread and handed to that queue. Overlapping
/// calls are caught by a cheap atomic guard and fail with `.concurrentUse` instead of entering the
/// plugin twice. Different instances may be used concurrently.
///
/// The plugin instance is destroyed in `deinit`; the instance keeps its plugin library loaded until then.
public final class DiarizationInstance: @unchecked Sendable {
    public let providerID: String
    public let sessionID: String

    private let plugin: LoadedPlugin
    /// The factory that made it: revision 6's push_audio_many is called through it.
    private let factory: UnsafePointer<speakersync_factory_t>
    private let instance: UnsafeMutablePointer<speakersync_instance_t>
    private let logger: Logger
    private let busy = Atomic<Bool>(false)
    // Mutated only while `busy` is held.
    private var state = State.open
    private var scratch = [speakersync_turn_t](
        repeating: speakersync_turn_t(turn_id: 0, speaker: 0, start_seconds: 0, end_seconds: 0, confidence: 0, flags: 0),
        count: 64)

    private enum State { case open, finalized, failed }

    /// Upper bound on turns per pull: guards against a plugin that always fills the buffer.
    private static let maximumTurnsPerPull = 1_000_000

    init(
        providerID: String, sessionID: String, plugin: LoadedPlugin, factory: UnsafePointer<speakersync_factory_t>,
        instance: UnsafeMutablePointer<speakersync_instance_t>, logger: Logger
    ) throws(PluginError) {
        let table = instance.pointee
        guard Int(table.struct_size) >= ABIRevision.instanceV1Size, table.push_audio != nil,
            table.pull_turns != nil, table.finalize != nil, table.last_error != nil, table.destroy != nil
        else {
            // Without a trustworthy table there is no safe way to call destroy: leak it and say so.
            logger.error("plugin returned an invalid instance table; leaking it", metadata: ["provider": "\(providerID)"])
            throw PluginError(.createFailed, "the plugin returned an instance table too small for ABI v1 or with NULL members")
        }
        self.providerID = providerID
        self.sessionID = sessionID
        self.plugin = plugin
        self.factory = factory
        self.instance = instance
        self.logger = logger
    }

    deinit {
        instance.pointee.destroy(instance)
    }

    /// Push the next samples (mono float32 at the instance's sample rate).
    public func push(samples: [Float]) throws(PluginError) {
        try samples.withUnsafeBufferPointer { (buffer) throws(PluginError) in try push(samples: buffer) }
    }

    /// Push without copying: the buffer is borrowed only for the call.
    public func push(samples: UnsafeBufferPointer<Float>) throws(PluginError) {
        try exclusive { () throws(PluginError) in
            if let refusal = pushRefusal { throw refusal }
            guard !samples.isEmpty else { return }
            let status = instance.pointee.push_audio(instance, samples.baseAddress, samples.count)
            guard status == SPEAKERSYNC_OK else { throw failure(.pushFailed, status) }
        }
    }

    /// Instances with the same key can be pushed together (`push(many:)`): those of one factory that
    /// offers revision 6's push_audio_many. Nil when the factory does not.
    public var batchKey: UInt? {
        guard ABIRevision.has(factory.pointee.struct_size, \speakersync_factory_t.push_audio_many), factory.pointee.push_audio_many != nil
        else { return nil }
        return UInt(bitPattern: factory)
    }

    /// Pushes into several instances of one factory in one call (push_audio_many), each as `push`
    /// would: every instance's error at its index, nil where it succeeded. All must share a
    /// `batchKey`; an instance busy elsewhere or no longer open fails alone, as `push` would.
    public static func push(many items: [(instance: DiarizationInstance, samples: UnsafeBufferPointer<Float>)]) -> [PluginError?] {
        guard let first = items.first else { return [] }
        guard let key = first.instance.batchKey, items.allSatisfy({ $0.instance.batchKey == key }),
              let call = first.instance.factory.pointee.push_audio_many else {
            return items.map { _ in PluginError(.invalidArgument, "push(many:) needs instances of one factory with push_audio_many") }
        }
        var errors = [PluginError?](repeating: nil, count: items.count)
        var admitted: [Int] = []
        for (index, item) in items.enumerated() {
            let instance = item.instance
            guard instance.enter() else {
                errors[index] = Self.concurrentUse
                continue
            }
            if let refusal = instance.pushRefusal {
                errors[index] = refusal
                instance.leave()
                continue
            }
            admitted.append(index)
        }
        defer { for index in admitted { items[index].instance.leave() } }
        guard !admitted.isEmpty else { return errors }
        let instances: [UnsafeMutablePointer<speakersync_instance_t>?] = admitted.map { items[$0].instance.instance }
        let samples: [UnsafePointer<Float>?] = admitted.map { items[$0].samples.baseAddress }
        let counts = admitted.map { items[$0].samples.count }
        var statuses = [speakersync_status_t](repeating: SPEAKERSYNC_ERR_INTERNAL, count: admitted.count)
        call(first.instance.factory, instances, samples, counts, admitted.count, &statuses)
        for (position, index) in admitted.enumerated() where statuses[position] != SPEAKERSYNC_OK {
            errors[index] = items[index].instance.failure(.pushFailed, statuses[position])
        }
        return errors
    }

    /// All turns the plugin has pending: new turns, revisions (same id) and removals.
    public func pullTurns() throws(PluginError) -> [ProviderTurn] {
        try exclusive { () throws(PluginError) in
            guard state != .failed else { throw PluginError(.invalidState, "the instance failed earlier") }
            return try drain()
        }
    }

    /// Tell the plugin no more audio comes, then pull everything it sends back (it may revise any turn).
    public func finalize() throws(PluginError) -> [ProviderTurn] {
        try exclusive { () throws(PluginError) in
            guard state == .open else {
                throw PluginError(.invalidState, state == .finalized ? "finalize called twice" : "the instance failed earlier")
            }
            let status = instance.pointee.finalize(instance)
            guard status == SPEAKERSYNC_OK else { throw failure(.finalizeFailed, status) }
            state = .finalized
            return try drain()
        }
    }

    /// Whether the plugin can report speaker voice profiles (ABI 1 revision 2).
    public var supportsSpeakerProfiles: Bool {
        ABIRevision.has(instance.pointee.struct_size, \speakersync_instance_t.speaker_profile) && instance.pointee.speaker_profile != nil
    }

    /// The plugin's voice profile of provider speaker `speaker`: what the host stores to recognise
    /// the speaker after a reconnect or to save them as a person. Nil when the plugin has no profiles.
    public func speakerProfile(speaker: Int32) throws(PluginError) -> SpeakerProfile? {
        guard supportsSpeakerProfiles, let call = instance.pointee.speaker_profile else { return nil }
        return try exclusive { () throws(PluginError) in
            var buffer = [Float](repeating: 0, count: 4096)
            var dimension = 0
            var duration = 0.0
            let status = buffer.withUnsafeMutableBufferPointer { out in
                call(instance, speaker, out.baseAddress, out.count, &dimension, &duration)
            }
            guard status == SPEAKERSYNC_OK else { throw failure(.invalidArgument, status, keepOpen: true) }
            guard dimension > 0, dimension <= buffer.count, duration.isFinite else {
                throw PluginError(.invalidArgument, "the plugin reported a profile of dimension \(dimension), \(duration) s")
            }
            return SpeakerProfile(embedding: Array(buffer[0 ..< dimension]), durationSeconds: max(0, duration))
        }
    }

    // MARK: - Helpers (called with `busy` held)

    private func drain() throws(PluginError) -> [ProviderTurn] {
        var turns: [ProviderTurn] = []
        let capacity = scratch.count
        while true {
            var written = 0
            let status = scratch.withUnsafeMutableBufferPointer { buffer in
                instance.pointee.pull_turns(instance, buffer.baseAddress, capacity, &written)
            }
            guard status == SPEAKERSYNC_OK else { throw failure(.pullFailed, status) }
            guard written <= capacity else {
                state = .failed
                throw PluginError(.pullFailed, "the plugin wrote \(written) turns into a buffer of \(capacity)")
            }
            for raw in scratch[0..<written] {
                if let turn = validated(raw) { turns.append(turn) }
            }
            if written < capacity { return turns }
            if turns.count > Self.maximumTurnsPerPull {
                state = .failed
                throw PluginError(.pullFailed, "the plugin keeps filling the turn buffer (over \(Self.maximumTurnsPerPull) turns)")
            }
        }
    }

    /// Drop turns the rest of the server cannot use, with a warning: the plugin is buggy, the session is not.
    private func validated(_ raw: speakersync_turn_t) -> ProviderTurn? {
        let removed = raw.flags & SPEAKERSYNC_TURN_REMOVED != 0
        let timesUsable = raw.start_seconds.isFinite && raw.end_seconds.isFinite && raw.start_seconds >= 0
            && raw.end_seconds >= raw.start_seconds
        guard removed || (timesUsable && raw.speaker >= 0) else {
            logger.warning(
                "dropping an invalid turn from the provider",
                metadata: [
                    "provider": "\(providerID)", "session": "\(sessionID)", "turn": "\(raw.turn_id)",
                    "start": "\(raw.start_seconds)", "end": "\(raw.end_seconds)", "speaker": "\(raw.speaker)",
                ])
            return nil
        }
        let confidence = raw.confidence.isFinite ? min(max(Double(raw.confidence), 0), 1) : 0
        return ProviderTurn(
            turnID: raw.turn_id, speaker: raw.speaker, startSeconds: raw.start_seconds, endSeconds: raw.end_seconds,
            confidence: confidence, isRemoved: removed)
    }

    private func failure(_ code: PluginError.Code, _ status: Int32, keepOpen: Bool = false) -> PluginError {
        if !keepOpen { state = .failed }
        let message = instance.pointee.last_error(instance).map { String(cString: $0) } ?? ""
        return PluginError(code, message.isEmpty ? "the plugin returned status \(status)" : message, status: status)
    }

    /// Why a push cannot go in now (nil: it can): `push`'s and `push(many:)`'s one check.
    private var pushRefusal: PluginError? {
        state == .open ? nil : PluginError(.invalidState, state == .finalized ? "push after finalize" : "the instance failed earlier")
    }

    private static let concurrentUse = PluginError(.concurrentUse, "instance used from two threads at once; use one serial queue")

    /// Takes `busy`; false when another thread holds it. `exclusive` and `push(many:)` enter through here.
    private func enter() -> Bool {
        busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    private func leave() {
        busy.store(false, ordering: .releasing)
    }

    private func exclusive<T>(_ body: () throws(PluginError) -> T) throws(PluginError) -> T {
        guard enter() else { throw Self.concurrentUse }
        defer { leave() }
        return try body()
    }
}
