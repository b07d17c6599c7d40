#if canImport(Glibc)
import Glibc
#endif
import CSpeakerSyncPluginABI

/// The instance table of a Swift provider's session: the session, its pending turns and its
/// last-error text behind `instance_data`. Every member runs on the session's queue (the ABI's rule).
final class PluginInstanceBox {
    let session: any PluginProviderSession
    var pending: [PluginTurn] = []
    var finalized = false
    /// last_error's text: plugin-owned, valid until the next call on the instance.
    let lastError = UnsafeMutablePointer<CChar>.allocate(capacity: 512)

    init(session: any PluginProviderSession) {
        self.session = session
        lastError.initialize(to: 0)
    }

    deinit { lastError.deallocate() }

    /// What a push may do: refused (the status says why, last_error the message), nothing (no
    /// samples), or go ahead with these samples. Clears last_error first, as every call does.
    enum Admission {
        case refused(speakersync_status_t)
        case nothing
        case push(UnsafeBufferPointer<Float>)
    }

    /// push_audio's and push_audio_many's checks, in one place.
    func admit(_ samples: UnsafePointer<Float>?, _ count: Int) -> Admission {
        lastError[0] = 0
        guard count > 0 else { return .nothing }
        guard !finalized else { return .refused(fail(PluginFailure(.badState, "push_audio after finalize"))) }
        guard let samples else { return .refused(fail(PluginFailure(.invalidArgument, "push_audio: samples is NULL"))) }
        let buffer = UnsafeBufferPointer(start: samples, count: count)
        if let bad = buffer.firstIndex(where: { !$0.isFinite }) {
            return .refused(fail(PluginFailure(.invalidArgument, "push_audio: sample \(bad) is not finite")))
        }
        return .push(buffer)
    }

    /// A push succeeded: its turns wait for pull_turns.
    func pushed() -> speakersync_status_t {
        pending += session.pullTurns()
        return SPEAKERSYNC_OK
    }

    func fail(_ failure: PluginFailure) -> speakersync_status_t {
        writeMessage(lastError, 512, failure.message)
        return failure.kind.status
    }
}

enum PluginInstanceCalls {
    static func table(for session: any PluginProviderSession) -> UnsafeMutablePointer<speakersync_instance_t> {
        let instance = UnsafeMutablePointer<speakersync_instance_t>.allocate(capacity: 1)
        instance.initialize(to: speakersync_instance_t(
            struct_size: UInt32(MemoryLayout<speakersync_instance_t>.size),
            instance_data: Unmanaged.passRetained(PluginInstanceBox(session: session)).toOpaque(),
            push_audio: { instance, samples, count in
                guard let box = PluginInstanceCalls.box(instance) else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
                switch box.admit(samples, count) {
                case .refused(let status): return status
                case .nothing: return SPEAKERSYNC_OK
                case .push(let buffer):
                    do throws(PluginFailure) {
                        try box.session.push(buffer)
                        return box.pushed()
                    } catch {
                        return box.fail(error)
                    }
                }
            },
            pull_turns: { instance, out, capacity, written in
                guard let box = PluginInstanceCalls.box(instance) else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
                box.lastError[0] = 0
                guard let written, out != nil || capacity == 0 else {
                    return box.fail(PluginFailure(.invalidArgument, "pull_turns: NULL out or written"))
                }
                let count = min(capacity, box.pending.count)
                if count > 0, let out {
                    for index in 0 ..< count {
                        let turn = box.pending[index]
                        out[index] = speakersync_turn_t(
                            turn_id: turn.id, speaker: turn.speaker, start_seconds: turn.startSeconds, end_seconds: turn.endSeconds,
                            confidence: turn.confidence, flags: turn.isRemoved ? SPEAKERSYNC_TURN_REMOVED : 0)
                    }
                    box.pending.removeFirst(count)
                }
                written.pointee = count
                return SPEAKERSYNC_OK
            },
            finalize: { instance in
                guard let box = PluginInstanceCalls.box(instance) else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
                box.lastError[0] = 0
                guard !box.finalized else { return box.fail(PluginFailure(.badState, "finalize called twice")) }
                box.finalized = true
                do throws(PluginFailure) {
                    try box.session.finalize()
                    box.pending += box.session.pullTurns()
                    return SPEAKERSYNC_OK
                } catch {
                    return box.fail(error)
                }
            },
            last_error: { instance in
                UnsafePointer(PluginInstanceCalls.box(instance)?.lastError ?? PluginInstanceCalls.nullInstanceMessage)
            },
            destroy: { instance in
                guard let instance else { return }
                if let data = instance.pointee.instance_data { Unmanaged<PluginInstanceBox>.fromOpaque(data).release() }
                instance.deinitialize(count: 1)
                instance.deallocate()
            },
            speaker_profile: { instance, speaker, out, capacity, dimension, duration in
                guard let box = PluginInstanceCalls.box(instance) else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
                box.lastError[0] = 0
                guard let (embedding, seconds) = box.session.profile(of: speaker) else {
                    return box.fail(PluginFailure(.invalidArgument, "no speaker \(speaker) in this session"))
                }
                guard let out, capacity >= embedding.count else {
                    return box.fail(PluginFailure(.invalidArgument, "profile needs \(embedding.count) floats, got room for \(capacity)"))
                }
                for (index, value) in embedding.enumerated() { out[index] = value }
                dimension?.pointee = embedding.count
                duration?.pointee = seconds
                return SPEAKERSYNC_OK
            }))
        return instance
    }

    static func box(_ instance: UnsafePointer<speakersync_instance_t>?) -> PluginInstanceBox? {
        guard let data = instance?.pointee.instance_data else { return nil }
        return Unmanaged<PluginInstanceBox>.fromOpaque(data).takeUnretainedValue()
    }

    static func box(_ instance: UnsafeMutablePointer<speakersync_instance_t>?) -> PluginInstanceBox? {
        box(UnsafePointer(instance))
    }

    private nonisolated(unsafe) static let nullInstanceMessage: UnsafeMutablePointer<CChar> = strdup("instance is NULL")!
}
