import ProviderPluginKit
import DiarizationModels
import Foundation
import Logging
import SpeakerManager
import StreamingDiarization
import VoiceActivity

/// One speakerkit instance: a `StreamingDiarizer` behind the C instance table (ProviderPluginKit's).
/// Driven from one session queue (the ABI's rule), so no locking inside.
final class SpeakerKitSession: PluginProviderSession {
    let diarizer: StreamingDiarizer
    let sessionID: String
    /// Given back to the runtime's pool when the session ends.
    let detector: SileroVoiceActivityDetector
    private let runtime: SpeakerKitRuntime
    let logger: Logger
    /// The embedding stride from the host's backlog: labels on time at a coarser grain when the worker
    /// cannot keep up (docs/benchmarks.md, "Load shedding").
    private var shedding: LoadShedding
    /// The overlap pass (docs/speakerkit.md, step 8): segments the audio as it arrives, on the runtime's
    /// low-priority worker; at finalize its turns are added to the diarizer's. Nil when off. A failure
    /// of the model, or a worker too far behind, ends the pass for the session, never the session.
    private let overlap: BackgroundOverlapTracker?
    /// The diarizer's turns as published so far (id → turn), which the overlap pass completes.
    private var published: [UInt64: DiarizerTurn] = [:]
    /// Turns taken from the diarizer at finalize, and the overlap pass's, for the next pull.
    private var held: [DiarizerTurn] = []
    /// Added turns' ids: far above the diarizer's (which count up from 1), so they never meet.
    static let overlapTurnIDBase: UInt64 = 1 << 62
    /// The ids of the further pieces of a turn split by `trimSilences`: between the diarizer's and the overlap pass's.
    static let trimmedPieceIDBase: UInt64 = 1 << 61
    /// The ids of `relabelSoloSpeech`'s turns (its new turns, then the further pieces of turns it cut):
    /// above the trimmed pieces' (which count up from their base), below the overlap pass's.
    static let relabelledTurnIDBase: UInt64 = (1 << 61) + (1 << 60)
    /// Added turns carry this confidence: the model's decision is binary, and the speaker's name is
    /// inferred from the window's other frames, so they rank below the diarizer's own turns.
    static let overlapTurnConfidence: Float = 0.5

    init(runtime: SpeakerKitRuntime, embedder: any SpeakerEmbedder, options: DiarizerOptions, known: [Speaker], sessionID: String,
         segmenter: PyannoteSegmenter? = nil) throws {
        self.sessionID = sessionID
        shedding = LoadShedding(spread: LoadShedding.spread(forSessionID: sessionID))
        var logger = runtime.logger
        logger[metadataKey: "session"] = "\(sessionID)"
        self.logger = logger
        var managerConfig = options.config.speakerManagerConfig
        managerConfig.embeddingDimension = embedder.dimension
        let speakers = try SpeakerManager(config: managerConfig, logger: logger)
        if !known.isEmpty { try speakers.initializeKnownSpeakers(known, mode: .overwrite, preserveIfPermanent: false) }
        self.runtime = runtime
        detector = try runtime.detectors.take()
        diarizer = StreamingDiarizer(
            config: options.config, hint: options.hint, detector: SileroSpeechDetector(detector: detector),
            embedder: embedder, speakers: speakers, logger: logger)
        overlap = segmenter.map { BackgroundOverlapTracker(segmenter: $0, worker: runtime.overlapWorker, logger: logger) }
    }

    deinit {
        runtime.detectors.giveBack(detector)
    }

    func push(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) {
        adjustStride(forPushOf: samples.count)
        hearSegmentation()
        let audio = Array(samples)
        do {
            try diarizer.push(audio)
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
        pushed(audio)
    }

    /// What follows a push the diarizer took: the pace, and the overlap pass.
    private func pushed(_ audio: [Float]) {
        audioSeconds += Double(audio.count) / 16_000
        overlap?.push(audio, mayWait: isFasterThanRealTime)
    }

    /// Distinct sessions' pushes, every window they have due embedded in one encoder call
    /// (`DiarizerBatch`). Why: with a frame embedded as soon as its look-ahead is in (`minimumBatch`
    /// 1), a session alone calls the encoder with one window, the encoder's dearest shape; many
    /// sessions' windows together cost about a third less each (`speakersync-bench batch
    /// --encoder-batch`, docs/benchmarks.md). Each diarizer gets exactly the embeddings it would get
    /// alone, row for row, so labels do not change (`SpeakerKitBatchedPushTests`, to the last bit).
    /// All the sessions must share `embedder`.
    static func push(together items: [(session: SpeakerKitSession, samples: UnsafeBufferPointer<Float>)],
                     embedder: any SpeakerEmbedder) -> [PluginFailure?] {
        let audio = items.map { item in
            item.session.adjustStride(forPushOf: item.samples.count)
            item.session.hearSegmentation()
            return Array(item.samples)
        }
        let errors = DiarizerBatch.push(zip(items, audio).map { ($0.session.diarizer, $1) }, embedder: embedder)
        return items.indices.map { index in
            if let error = errors[index] { return PluginFailure(.internalError, "\(error)") }
            items[index].session.pushed(audio[index])
            return nil
        }
    }

    /// Audio pushed so far, and when the session started: a session whose audio arrives at more than
    /// three times real time (an upload, a fast replay) waits for its own overlap segmentation rather
    /// than losing it (`BackgroundOverlapTracker`); 10 s of slack for a device's catch-up after a reconnect.
    private var audioSeconds = 0.0
    private let startedAt = Date()
    private var isFasterThanRealTime: Bool { audioSeconds > 3 * Date().timeIntervalSince(startedAt) + 10 }

    /// Segmentation windows the worker has finished since the last push go to the diarizer before this
    /// one: each may raise its live passes' count floor (`StreamingDiarizer.heard(_:)`). A worker
    /// behind by a window or two only delays the floor; a pass given up leaves the floor where it was.
    private func hearSegmentation() {
        for window in overlap?.takeFinishedWindows() ?? [] { diarizer.heard(window) }
    }

    /// Load shedding's step for the push of `sampleCount` samples now starting.
    func adjustStride(forPushOf sampleCount: Int) {
        let backlog = runtime.backlogSeconds()
        let stride = shedding.update(backlogSeconds: backlog, audioSeconds: Double(sampleCount) / 16_000)
        if stride != diarizer.embeddingStride {
            logger.info(stride > diarizer.embeddingStride ? "behind: embedding fewer frames" : "catching up: embedding more frames", metadata: [
                "embedding_stride": "\(stride)", "backlog_seconds": "\(String(format: "%.2f", backlog))",
            ])
            diarizer.embeddingStride = stride
        }
    }

    func pullTurns() -> [PluginTurn] {
        let turns = held + takeDiarizerTurns()
        held = []
        return turns.map {
            PluginTurn(id: $0.id, speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds,
                       confidence: $0.confidence, isRemoved: $0.isRemoved)
        }
    }

    /// The diarizer's new turns, remembered in `published`.
    private func takeDiarizerTurns() -> [DiarizerTurn] {
        let turns = diarizer.pullTurns()
        for turn in turns { published[turn.id] = turn.isRemoved ? nil : turn }
        return turns
    }

    func finalize() throws(PluginFailure) {
        // The last window first: the re-clustering may use the model's windows (splitOffSegmentedVoice).
        let windows = overlap?.finish()
        diarizer.localActivity = windows ?? []
        do {
            try diarizer.finalize()
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
        held += takeDiarizerTurns()
        if let windows {
            trimSilences(windows)
            relabelSoloSpeech(windows)
            let final = published.values.map { OverlapTurns.Span(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
            let orphanVoice = diarizer.orphanVoice(finalSpeakers: Set(final.map(\.speaker)))
            for (index, span) in OverlapTurns.added(to: final, windows: windows, orphanVoice: orphanVoice).enumerated() {
                held.append(DiarizerTurn(id: Self.overlapTurnIDBase + UInt64(index), speaker: span.speaker, startSeconds: span.startSeconds,
                                         endSeconds: span.endSeconds, confidence: Self.overlapTurnConfidence))
            }
        }
        logger.debug("finalized", metadata: [
            "speakers": "\(diarizer.speakersWithTurns.count)", "embedded_frames": "\(diarizer.embeddedFrameCount)",
            "shed_frames": "\(diarizer.shedFrameCount)", "overlap_turns": "\(held.filter { $0.id >= Self.overlapTurnIDBase }.count)",
        ])
    }

    /// Gives the moments the segmentation hears one person alone, under another person's turn, to the
    /// person it hears (`SoloRelabel`, docs/speakerkit.md step 8): cut turns are revised as
    /// `trimSilences` revises them, and each given stretch is a new turn of the diarizer's confidence
    /// for the turn it came from.
    private func relabelSoloSpeech(_ windows: [LocalActivityWindow]) {
        let share = diarizer.config.soloRelabelShare
        guard share > 0 else { return }
        let turns = published.values.sorted { $0.id < $1.id }
        let spans = turns.map { OverlapTurns.Span(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let result = SoloRelabel.relabelled(spans, windows: windows, trustedShare: share)
        guard !result.given.isEmpty else { return }
        var nextID = Self.relabelledTurnIDBase
        for (turn, pieces) in zip(turns, result.pieces) { revise(turn, into: pieces, nextID: &nextID) }
        for span in result.given {
            // The confidence of the turn the stretch was taken from (the one that held its middle).
            let middle = (span.startSeconds + span.endSeconds) / 2
            let source = turns.first { $0.startSeconds <= middle && middle < $0.endSeconds && $0.speaker != span.speaker }
            let turn = DiarizerTurn(id: nextID, speaker: span.speaker, startSeconds: span.startSeconds, endSeconds: span.endSeconds,
                                    confidence: source?.confidence ?? Self.overlapTurnConfidence)
            nextID += 1
            published[turn.id] = turn
            held.append(turn)
        }
    }

    /// Replaces a published turn by `pieces` of it: unchanged when they are the turn itself, removed when
    /// there are none; otherwise the first piece keeps the turn's id (a revision) and the others get ids
    /// from `nextID` on.
    private func revise(_ turn: DiarizerTurn, into pieces: [OverlapTurns.Span], nextID: inout UInt64) {
        let whole = OverlapTurns.Span(speaker: turn.speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds)
        guard pieces != [whole] else { return }
        guard !pieces.isEmpty else {
            published[turn.id] = nil
            held.append(DiarizerTurn(id: turn.id, speaker: turn.speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds,
                                     confidence: turn.confidence, isRemoved: true))
            return
        }
        for (index, piece) in pieces.enumerated() {
            let id = index == 0 ? turn.id : nextID
            if index > 0 { nextID += 1 }
            let revised = DiarizerTurn(id: id, speaker: turn.speaker, startSeconds: piece.startSeconds, endSeconds: piece.endSeconds,
                                       confidence: turn.confidence)
            published[id] = revised
            held.append(revised)
        }
    }

    /// Cuts from the published turns the silence both the loudness track and the segmentation hear
    /// (`SilenceTrim`, docs/speakerkit.md step 8): a turn's first piece keeps its id and is sent as a
    /// revision, further pieces get new ids, a turn with nothing left is removed.
    private func trimSilences(_ windows: [LocalActivityWindow]) {
        let silences = diarizer.agreedSilences(windows: windows)
        guard !silences.isEmpty else { return }
        var nextID = Self.trimmedPieceIDBase
        for turn in published.values.sorted(by: { $0.id < $1.id }) {
            let whole = OverlapTurns.Span(speaker: turn.speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds)
            revise(turn, into: SilenceTrim.pieces(of: whole, silences: silences), nextID: &nextID)
        }
    }

    func profile(of speaker: Int32) -> (embedding: [Float], seconds: Double)? {
        diarizer.profile(of: speaker)
    }
}
