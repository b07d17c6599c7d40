import Foundation
import SessionProtocol
import SpeakerSyncStore
import TranscriptMerge

/// Persist, then tell the device: the acknowledgement contract, in one place.
///
/// - A word goes out `stored: true` only in an update sent after the commit of the step that
///   carried it. The store writer commits one conversation's steps in the order they were queued and
///   retries a failed drain before any later one, so a committed step means every earlier step of
///   the session is committed too; "this update's words are stored" is then exactly true.
/// - A transient failure (PostgreSQL down or restarting) sends the update at once with
///   `stored: false` and one non-fatal `storage_unavailable`; the step stays queued and is retried
///   in order, and its words are sent again with `stored: true` once committed.
/// - A step PostgreSQL refuses for good ends the session with `storage_rejected` (fatal) naming what
///   was refused: no later update goes out, so nothing after it is ever acknowledged, while what was
///   acknowledged before stays stored. (Text PostgreSQL cannot hold never gets this far: the protocol
///   edge refuses it as `invalid_text`.)
/// - `session` goes out only once the conversation row is committed (SessionRunner+Start.swift),
///   and the 1000 close only after the final step is committed (SessionRunner+Ending.swift).
extension SessionRunner {
    /// When a step's continuation runs. The store reports an outage first (stored: false) and the
    /// commit later (stored: true) for the same step.
    enum Delivery {
        /// Every outcome: transcript updates go out at once marked not stored, and again once stored.
        case everyOutcome
        /// Only the first outcome (a teardown's release, which must not wait out an outage: the
        /// writer keeps the step queued in order whatever the session does next).
        case firstOutcome
        /// Only after the commit (the start's `session`, finalize's final transcript and close).
        case committedOnly
    }

    /// Stores `delta` (plus `step`) and sends the transcript update once it is committed.
    func commit(_ delta: TranscriptDelta, step: PersistStep = PersistStep(), announceSpeakers: Bool = false) {
        guard let live else { return }
        var step = step
        step.changedWords = delta.changedWords
        step.removedWords = delta.removedWords
        if live.audioSecondsSinceSave >= 5 { step.conversation = live.currentConversation }
        let newSpeakers = announceSpeakers || !step.speakers.isEmpty
        guard !step.isEmpty || !delta.isEmpty else { return }
        if step.conversation != nil { live.markSaved() }
        persist(step) { [self] stored in
            guard let live = self.live else { return }
            if newSpeakers { run(machine.send(.speakers(wireSpeakers(live.labelling.speakers)))) }
            if !delta.upserted.isEmpty || !delta.removed.isEmpty {
                sendUtterances(delta.upserted, removed: delta.removed, stored: stored, isFinal: false)
            }
        }
    }

    /// `evenAfterRejection`: the step's continuation runs even after PostgreSQL refused one of the
    /// session's steps (a teardown must release the session); it never acknowledges words.
    func persist(_ step: PersistStep, delivery: Delivery = .everyOutcome, evenAfterRejection: Bool = false,
                 then: @escaping @Sendable (_ stored: Bool) -> Void) {
        guard let conversationID = live?.conversationID else { return }
        if step.isEmpty {
            then(true)
            return
        }
        var fenced = step
        fenced.fence = live?.fence
        let bytes = step.estimatedBytes
        stepQueued(bytes: bytes)
        let delivered = DeliveryFlag()
        environment.store.persist(fenced, conversationID: conversationID) { [self] result in
            queue.async { [self] in
                let stored: Bool
                switch result {
                case .success:
                    machine.storageRecovered()
                    stored = true
                    if !step.changedWords.isEmpty {
                        environment.metrics.increment("speakersync_words_stored_total", by: Double(step.changedWords.count))
                    }
                case .failure(let error as StoreError) where error.code == .rejected:
                    stored = false
                    storageWasRejected(error)
                case .failure(let error as StoreError) where error.code == .fenced:
                    stored = false
                    conversationWasTakenOver()
                case .failure(let error):
                    environment.metrics.increment("speakersync_store_failures_total")
                    logger.error("store write failed; it is retried", metadata: ["error": "\(error)"])
                    run(machine.storageFailed(message: "PostgreSQL is unavailable: updates are not stored yet and are retried in order"))
                    stored = false
                }
                // Settled: committed, or refused for good (an outage keeps the step pending).
                if stored || storageRejected, !delivered.settled {
                    delivered.settled = true
                    stepSettled(bytes: bytes)
                }
                guard !storageRejected || evenAfterRejection else { return }
                switch delivery {
                case .everyOutcome: then(stored)
                case .firstOutcome: if !delivered.value { then(stored) }
                case .committedOnly: if stored { then(stored) }
                }
                delivered.value = true
            }
        }
    }

    /// PostgreSQL refused a step for good: the session ends, and nothing after this is acknowledged.
    private func storageWasRejected(_ error: StoreError) {
        environment.metrics.increment("speakersync_store_rejections_total")
        logger.error("PostgreSQL refused a session's write; the session ends", metadata: ["error": "\(error)"])
        guard !storageRejected else { return }
        storageRejected = true
        endReason = endReason ?? "PostgreSQL refused a write: \(error.refusedWhat)"
        let failure = ProtocolError(.storageRejected,
            "PostgreSQL refused this session's \(error.refusedWhat); words acknowledged before are stored, nothing after is")
        if starting != nil {
            failStart(failure)
        } else {
            run(machine.failed(failure))
        }
    }

    /// Another session claimed the conversation since this one did (a resume on another server while
    /// this one was paused or cut off from PostgreSQL): the step was not written, and nothing after
    /// it is acknowledged. The device hears `resumed_elsewhere`.
    private func conversationWasTakenOver() {
        environment.metrics.increment("speakersync_store_fenced_total")
        logger.warning("the conversation was claimed by another session; this one ends without writing")
        guard !storageRejected else { return }
        storageRejected = true
        endReason = endReason ?? "the conversation was resumed elsewhere"
        let failure = ProtocolError(.resumedElsewhere,
            "this conversation was resumed on another connection; words not acknowledged here were not stored by this one")
        if starting != nil {
            failStart(failure)
        } else {
            run(machine.failed(failure))
        }
    }

    func sendUtterances(_ utterances: [Utterance], removed: [UtteranceID], stored: Bool, isFinal: Bool) {
        guard let live, !storageRejected else { return }
        live.labelling.labelLatency.labelsSent(utterances.flatMap { $0.words.map { (id: $0.id, speaker: $0.speaker) } }, at: live.nowSeconds)
        let speakers = live.labelling.speakers
        let wire = utterances.map { utterance in
            WireUtterance(
                id: WireUtterance.wireID(utterance.id.rawValue), speaker: utterance.speaker,
                name: speakers.name(for: utterance.speaker), startSeconds: utterance.startSeconds,
                endSeconds: utterance.endSeconds, text: utterance.text,
                words: utterance.words.map { word in
                    WireWord(
                        text: word.text, startSeconds: word.startSeconds, endSeconds: word.endSeconds,
                        speaker: word.speaker, speakerConfidence: word.speakerConfidence, confidence: word.confidence,
                        isFinal: word.isFinal, isStored: stored
                    )
                }
            )
        }
        run(machine.transcriptUpdate(upserted: wire, removed: removed.map { WireUtterance.wireID($0.rawValue) }, isFinal: isFinal))
    }

    func wireSpeakers(_ registry: SpeakerRegistry) -> [WireSpeaker] {
        registry.speakers.map { WireSpeaker(label: $0.label, name: $0.name, mergedInto: $0.mergedInto) }
    }

    /// Hands a message to the transport and watches the outgoing queue (SessionRunner+Backpressure).
    func send(_ text: String) {
        environment.transport.send(text: text, to: connection)
        outboundGrew()
    }
}

/// Whether a step's continuation already ran, and whether it settled; only touched on the session's queue.
final class DeliveryFlag: @unchecked Sendable { // confined to one session's queue
    var value = false
    var settled = false
}

extension StoreError {
    /// What PostgreSQL refused, in words a client may read (no SQL, no SQLSTATE text, no paths).
    var refusedWhat: String {
        guard let target = refusedTarget else { return "write" }
        return "write to \(target)"
    }
}

extension PersistStep {
    /// A rough size in memory, for the session's limit on steps awaiting their commit.
    var estimatedBytes: Int {
        var bytes = 256
        bytes += changedWords.reduce(0) { $0 + 96 + $1.text.utf8.count }
        bytes += removedWords.count * 48
        bytes += (upsertedTurns.count + removedTurns.count) * 96
        bytes += speakers.count * 128 + keyLabels.count * 64
        bytes += audioChunks.reduce(0) { $0 + $1.samples.count * 2 }
        return bytes
    }
}
