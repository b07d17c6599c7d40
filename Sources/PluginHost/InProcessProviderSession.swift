import Dispatch
import Synchronization

/// A provider session in the server's own process: a `DiarizationInstance` called on the session's
/// queue, each event delivered before the call returns. What `--provider-isolation none` runs, and what
/// a worker process runs for each of its instances.
public final class InProcessProviderSession: ProviderSession, @unchecked Sendable {
    public let providerID: String
    public var pendingSampleCount: Int { 0 }
    /// The instance until finalize, failure or close; confined to the session's queue.
    private var instance: DiarizationInstance?
    private let events: @Sendable (ProviderEvent) -> Void
    /// Known speakers and every speaker a turn named: whose profiles finalize reports.
    private var speakers: Set<Int32>
    /// Audio between profile snapshots (samples at the instance's rate); 0: only at finalize.
    private let snapshotSamples: Int
    private var samplesSinceSnapshot = 0

    /// Seconds of audio between the voice-profile snapshots a push result carries.
    public static let profileSnapshotSeconds = 10.0

    public init(instance: DiarizationInstance, knownSpeakers: [Int32], sampleRate: Int = 16_000,
                events: @escaping @Sendable (ProviderEvent) -> Void) {
        self.providerID = instance.providerID
        self.instance = instance
        self.events = events
        self.speakers = Set(knownSpeakers)
        self.snapshotSamples = Int(Self.profileSnapshotSeconds * Double(sampleRate))
    }

    public func push(samples: [Float]) {
        guard let instance else { return }
        let started = ContinuousClock.now
        let cpuStarted = ThreadCPUTime.seconds()
        do {
            if !samples.isEmpty { try instance.push(samples: samples) }
        } catch {
            fail(error)
            return
        }
        pushed(sampleCount: samples.count, started: started, cpuSeconds: ThreadCPUTime.seconds() - cpuStarted)
    }

    /// Which sessions `push(many:)` can take together: those whose instances share a factory with
    /// revision 6's push_audio_many. Nil for an instance that has none, or after the session ended.
    public var batchKey: UInt? { instance?.batchKey }

    /// Pushes into several sessions (one `batchKey`, each its turn) with one call into the plugin,
    /// then delivers each session's `.processed` as `push` does. The call's CPU time is shared out by
    /// samples; each chunk's wall time is the whole call's.
    public static func push(many items: [(session: InProcessProviderSession, samples: [Float])]) {
        let live = items.filter { $0.session.instance != nil }
        guard !live.isEmpty else { return }
        let started = ContinuousClock.now
        let cpuStarted = ThreadCPUTime.seconds()
        let errors = withBuffers(live.map(\.samples)) { buffers in
            DiarizationInstance.push(many: zip(live, buffers).map { ($0.session.instance!, $1) })
        }
        let cpuSeconds = ThreadCPUTime.seconds() - cpuStarted
        let totalSamples = max(1, live.reduce(0) { $0 + $1.samples.count })
        for (item, error) in zip(live, errors) {
            if let error {
                item.session.fail(error)
            } else {
                item.session.pushed(sampleCount: item.samples.count, started: started,
                                    cpuSeconds: cpuSeconds * Double(item.samples.count) / Double(totalSamples))
            }
        }
    }

    /// The push's audio is in: pull its turns and report them.
    private func pushed(sampleCount: Int, started: ContinuousClock.Instant, cpuSeconds: Double) {
        guard let instance else { return }
        let cpuStarted = ThreadCPUTime.seconds()
        do {
            let turns = try instance.pullTurns()
            note(turns)
            samplesSinceSnapshot += sampleCount
            var profiles: [Int32: SpeakerProfile] = [:]
            if snapshotSamples > 0, samplesSinceSnapshot >= snapshotSamples {
                samplesSinceSnapshot = 0
                profiles = self.profiles(of: instance)
            }
            events(.processed(ProviderChunkResult(
                turns: turns, sampleCount: sampleCount, chunkWallSeconds: [(ContinuousClock.now - started).inSeconds],
                cpuSeconds: cpuSeconds + ThreadCPUTime.seconds() - cpuStarted, profiles: profiles)))
        } catch {
            fail(error)
        }
    }

    /// Calls `body` with a buffer over each array, all valid for the call.
    private static func withBuffers<Result>(_ arrays: [[Float]], _ body: ([UnsafeBufferPointer<Float>]) -> Result) -> Result {
        func nest(_ index: Int, _ buffers: [UnsafeBufferPointer<Float>]) -> Result {
            guard index < arrays.count else { return body(buffers) }
            return arrays[index].withUnsafeBufferPointer { nest(index + 1, buffers + [$0]) }
        }
        return nest(0, [])
    }

    public func finalize() {
        guard let instance else { return }
        let cpuStarted = ThreadCPUTime.seconds()
        do {
            let turns = try instance.finalize()
            note(turns)
            let profiles = self.profiles(of: instance)
            self.instance = nil
            events(.finalized(ProviderFinalResult(turns: turns, profiles: profiles, cpuSeconds: ThreadCPUTime.seconds() - cpuStarted)))
        } catch {
            fail(error)
        }
    }

    public func close() {
        instance = nil
    }

    /// Every known or reported speaker's profile, when the plugin keeps them (ABI: callable any time).
    private func profiles(of instance: DiarizationInstance) -> [Int32: SpeakerProfile] {
        guard instance.supportsSpeakerProfiles else { return [:] }
        var profiles: [Int32: SpeakerProfile] = [:]
        for speaker in speakers.sorted() {
            if let profile = try? instance.speakerProfile(speaker: speaker) { profiles[speaker] = profile }
        }
        return profiles
    }

    private func note(_ turns: [ProviderTurn]) {
        for turn in turns where !turn.isRemoved { speakers.insert(turn.speaker) }
    }

    private func fail(_ error: PluginError) {
        instance = nil
        events(.failed(error))
    }
}

extension Duration {
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
