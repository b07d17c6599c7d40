import Dispatch
import Foundation
import PluginHost
import SessionProtocol
import SpeakerSyncStore
import TranscriptMerge

/// How a session ends: finalize (everything stored, then the final transcript and 1000), teardown
/// (stored as interrupted, resumable), the provider failing, and the server stopping (stored, then
/// `server_stopping` and 1001). All on the queue.
extension SessionRunner {
    func finalize() {
        guard let live else {
            run(machine.finalizeCompleted())
            return
        }
        let now = live.nowSeconds
        live.labelling.labelLatency.audioEnded(at: now)
        for index in live.shadows.indices { live.shadows[index].labelLatency.audioEnded(at: now) }
        finishAnalysis { [self] in
            labelStrandedWords()
            // The words sent with the stop are acknowledged (their update sent) before the session's
            // end is built: the end (every turn, every word's label, the stats) is the heavy step, and
            // built first it held up its own words' update on this queue and in the writer. The end
            // commits after those steps anyway; a teardown meanwhile (the server stopping, a fatal
            // error) stores the conversation as interrupted instead.
            whenStepsSettled { [self] in
                guard !tearingDown, !released else { return }
                storeFinalizedConversation()
            }
        }
    }

    /// Once the final turns are in, the words no turn reaches take the nearest turn's speaker
    /// (`TranscriptMerger.labelStrandedWords`): in the session's own labelling, sent and stored as any
    /// change, and in every shadow's, stored with it. Only at finalize: an interrupted conversation may
    /// resume, and its next turns may still cover them. Label latency measures live labels: these words
    /// are left out of it, as they were while they stayed unlabelled (docs/accuracy.md, "Words no turn
    /// reaches").
    func labelStrandedWords() {
        guard let live else { return }
        let end = live.audioEndSeconds
        let (delta, stranded) = live.labelling.merger.labelStrandedWords(audioEndSeconds: end)
        live.labelling.labelLatency.wordsRemoved(stranded)
        commit(delta)
        for index in live.shadows.indices { live.shadows[index].merger.labelStrandedWords(audioEndSeconds: end) }
    }

    /// Runs `body` once every step this session has persisted is committed (or refused for good): at
    /// once when none is pending.
    func whenStepsSettled(_ body: @escaping @Sendable () -> Void) {
        if pendingSteps == 0 { body() } else { afterStepsSettled = body }
    }

    /// Finalize's last step: the conversation finalized with its labellings; then the final
    /// transcript, the stats and the 1000 close.
    private func storeFinalizedConversation() {
        guard let live = self.live else { return }
        live.finalized = true
        live.conversation.status = .finalized
        var step = PersistStep()
        step.conversation = live.currentConversation
        step.conversationEnded = true
        step.labellings = labellings(interruptedReason: nil)
        if let last = live.audioChunker?.flush(), admitStoredAudio([last]) { step.audioChunks = [last] }
        step.releasesLease = true
        // 1000 promises the conversation is safe: it waits for this commit, which comes after every
        // earlier step's (the writer keeps a conversation's order).
        persist(step, delivery: .committedOnly) { [self] stored in
            guard let live = self.live else { return }
            run(machine.send(.speakers(wireSpeakers(live.labelling.speakers))))
            sendUtterances(live.labelling.merger.utterances, removed: [], stored: stored, isFinal: true)
            run(machine.send(.stats(live.stats())))
            logger.info("session finalized", metadata: live.summaryMetadata)
            release()
            run(machine.finalizeCompleted())
        }
    }

    /// The connection ended without finalize: label what can be labelled and store it as interrupted,
    /// so a reconnect with the same conversation_id continues where this left off. `waitForAnalysis`
    /// false (the server stopping) stores what the session has now instead of waiting for the
    /// provider's final turns. `then` runs once the step's first outcome is known.
    func teardown(reason: String, waitForAnalysis: Bool = true, then: (@Sendable (_ stored: Bool) -> Void)? = nil) {
        guard let live, !released, !tearingDown else { return }
        tearingDown = true
        let store = { [self] in
            guard let live = self.live else { return }
            live.finalized = true
            live.conversation.status = .interrupted
            live.conversation.statusReason = reason
            var step = PersistStep()
            step.conversation = live.currentConversation
            // After PostgreSQL refused a step for good, the labellings (which name the words) could be
            // refused with it; the conversation's status alone is what must not be lost.
            if !storageRejected {
                step.labellings = labellings(interruptedReason: reason)
                if let last = live.audioChunker?.flush(), admitStoredAudio([last]) { step.audioChunks = [last] }
            }
            // Committed with the step, even when that is after an outage (the step stays queued).
            step.releasesLease = true
            persist(step, delivery: .firstOutcome, evenAfterRejection: true) { [self] stored in
                if let live = self.live { logger.info("session ended without finalize", metadata: live.summaryMetadata) }
                then?(stored)
                release()
            }
        }
        if !waitForAnalysis {
            live.labelling.engine?.close()
            live.labelling.engine = nil
            for index in live.shadows.indices { live.shadows[index].stop(reason: reason) }
            afterAnalysis = nil
            store()
        } else if afterAnalysis != nil {
            // A finalize is waiting for the provider and recogniser already: store as interrupted when
            // they are done.
            afterAnalysis = store
        } else {
            finishAnalysis(then: store)
        }
    }

    /// The server is stopping. A started session stops reading, stores what it has (without waiting
    /// for the provider's final turns: a stop must be quick), then sends `server_stopping` and closes
    /// with 1001, resumable; a session not started yet is told at once. `done` runs once the session
    /// has stored its last step.
    func serverStopping(_ done: @escaping @Sendable () -> Void) {
        queue.async {
            if self.endReason == nil { self.endReason = "the server stopped" }
            let stopping = ProtocolError(.serverStopping, "the server is stopping")
            guard let session = self.live, self.starting == nil, !self.released, !self.tearingDown else {
                self.run(self.machine.failed(ProtocolError(.serverStopping, "the server is stopping; connect again to start")))
                self.whenReleased(done)
                return
            }
            self.gate.pause(.stopping)
            let conversationID = session.conversationID
            self.teardown(reason: self.endReason ?? "the server stopped", waitForAnalysis: false) { [weak self] stored in
                guard let self else { return }
                let resume = stored
                    ? "everything acknowledged is stored; reconnect with conversation_id \(conversationID) to resume"
                    : "PostgreSQL is unavailable: words not acknowledged were not stored; reconnect with conversation_id \(conversationID) to resume and resend them"
                self.run(self.machine.failed(ProtocolError(stopping.code, "\(stopping.message): \(resume)")))
            }
            self.whenReleased(done)
        }
    }

    /// Runs `body` once this session has stored its last step and released its conversation
    /// (at once when it never started one).
    func whenReleased(_ body: @escaping @Sendable () -> Void) {
        if (live == nil && starting == nil) || released { body() } else { releaseWaiters.append(body) }
    }

    /// Asks the provider for its final turns (flushing the resampler's tail first) and the speech
    /// recogniser for its last utterance, both at once, and runs `body` once both are applied (at once
    /// when there is neither, or they are done or failed already). Each is asked only once, so a
    /// teardown that follows an abandoned finalize waits for what is still under way.
    func finishAnalysis(then body: @escaping () -> Void) {
        afterAnalysis = body
        if let live, !providerFinishing {
            providerFinishing = true
            let tail = live.resampler?.flush() ?? []
            if let engine = live.labelling.engine {
                if !tail.isEmpty { engine.push(samples: tail) }
                engine.finalize()
            }
            finishShadows(tail: tail)
        }
        if let recognizer = live?.recognizer, !recognizerFinishing {
            recognizerFinishing = true
            recognizer.finish()
        }
        runAfterAnalysisIfDone()
    }

    /// Runs the waiting finalize or teardown once neither the provider nor the recogniser is left.
    func runAfterAnalysisIfDone() {
        guard live?.labelling.engine == nil, live?.recognizer == nil, live?.shadows.contains(where: \.isRunning) != true,
              let body = afterAnalysis else { return }
        afterAnalysis = nil
        body()
    }

    /// The provider failed (a plugin error, or its worker crashed or hung): the session ends with
    /// `provider_failed` (1011) and what it has is stored as interrupted, so the device can resume,
    /// with this provider or another.
    func providerFailed(_ error: PluginError) {
        logger.error("provider failed", metadata: ["error": "\(error)"])
        environment.metrics.increment("speakersync_provider_failures_total",
                                      ["provider": live?.request.provider ?? "unknown", "code": error.code.rawValue])
        live?.labelling.engine?.close()
        live?.labelling.engine = nil
        if tearingDown {
            // The connection had ended already; the waiting teardown stores the conversation as
            // interrupted (once the recogniser, if any, is done too).
            runAfterAnalysisIfDone()
            return
        }
        // A finalize waiting for the final turns is abandoned: the fatal error tears the session down
        // instead, which stores it as interrupted, not finalized.
        afterAnalysis = nil
        let message = error.code == .providerCrashed || error.code == .providerHung
            ? error.message : "the diarization provider failed: \(error)"
        endReason = message
        run(machine.failed(ProtocolError(.providerFailed, message)))
    }

    func release() {
        guard let live, !released else { return }
        released = true
        // Only the completions of finalize's and teardown's last steps get here, and both steps gave the
        // lease up in their own transaction. A step PostgreSQL refused may have taken that with it:
        // then a statement of its own.
        if let fence = live.fence, storageRejected { releaseLease(live.conversationID, fence: fence) }
        environment.claims.release(live.conversationID, by: self)
        // The session's transcript goes with the runner once it has stored its last step, often long
        // after the connection closed (when the trim after the close ran): trim again then.
        MemoryReclaimer.shared.connectionClosed()
        let waiters = releaseWaiters
        releaseWaiters = []
        for waiter in waiters { waiter() }
    }

    /// Gives the conversation's lease back to the fleet (off the queue: it is a PostgreSQL statement).
    /// Every step of the session is queued by now and carries the same epoch, so they still commit;
    /// the next claim, here or elsewhere, increases the epoch and fences anything later.
    func releaseLease(_ conversationID: String, fence: WriteFence) {
        let store = environment.store
        let log = logger
        environment.startReads.async {
            do { try store.releaseConversation(conversationID, fence: fence) } catch {
                log.warning("conversation lease not released; it lapses with this server's or is claimed over", metadata: ["error": "\(error)"])
            }
        }
    }
}
