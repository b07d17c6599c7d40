import Dispatch
import SessionProtocol

/// Bounded memory per session: every place a session's data can pile up pauses reading its socket
/// (`ReceiveGate`), so TCP pushes back on the device and the server holds at most what
/// `SessionLimits` allows. Nothing is dropped, except a client that never reads what it is sent:
/// past the grace period it is cut off with `slow_reader` (4008). All on the queue.
extension SessionRunner {
    // MARK: Input

    /// `bytes` of received frames are done with (handled, or dropped with a held-back start).
    func inputHandled(bytes: Int) {
        guard bytes > 0 else { return }
        let left = inputBacklog.subtract(bytes, ordering: .relaxed).newValue
        if left < environment.limits.inputResumeBytes, gate.isPaused(for: .input) {
            if gate.resume(.input) { machine.noteActivity() }
        }
    }

    // MARK: Analysis (provider and speech recogniser)

    /// Audio handed over and not yet processed, in 16 kHz samples: the provider's or the speech
    /// recogniser's, whichever is further behind.
    var analysisBacklogSamples: Int {
        let provider = live?.labelling.engine?.pendingSampleCount ?? 0
        let recognizer = Int((live?.recognizer?.pendingSeconds ?? 0) * 16_000)
        return max(provider, recognizer)
    }

    /// Pauses reading while the provider or the recogniser has more audio in flight than the limit.
    func pauseReceivingIfProviderBehind() {
        if analysisBacklogSamples > environment.limits.providerBacklogPauseSamples { gate.pause(.analysis) }
    }

    /// Resumes reading once the provider's and the recogniser's audio in flight has drained.
    func resumeReceivingIfDrained() {
        if gate.isPaused(for: .analysis), analysisBacklogSamples < environment.limits.providerBacklogResumeSamples {
            if gate.resume(.analysis) { machine.noteActivity() }
        }
    }

    // MARK: Store

    func stepQueued(bytes: Int) {
        pendingSteps += 1
        pendingStepBytes += bytes
        let limits = environment.limits
        if pendingSteps > limits.pendingStepsPauseCount || pendingStepBytes > limits.pendingStepsPauseBytes {
            gate.pause(.store)
        }
    }

    func stepSettled(bytes: Int) {
        pendingSteps -= 1
        pendingStepBytes -= bytes
        if pendingSteps == 0, let body = afterStepsSettled {
            afterStepsSettled = nil
            // Next on the queue, so the settled step's own update goes out first.
            queue.async(execute: body)
        }
        let limits = environment.limits
        if gate.isPaused(for: .store), pendingSteps <= limits.pendingStepsResumeCount, pendingStepBytes <= limits.pendingStepsPauseBytes / 4 {
            if gate.resume(.store) { machine.noteActivity() }
        }
    }

    // MARK: Outgoing

    /// After each send: over the pause level, reading pauses (the session's output follows its
    /// input) and a timer watches the queue drain; over it for the whole grace period, the client is
    /// cut off.
    func outboundGrew() {
        guard outboundTimer == nil else { return }
        let queued = environment.transport.queuedBytes(for: connection)
        guard queued > environment.limits.outboundPauseBytes else { return }
        outboundOverSince = .now
        gate.pause(.outbound)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
        timer.setEventHandler { [weak self] in self?.checkOutbound() }
        outboundTimer = timer
        timer.resume()
    }

    /// While reading is paused for the outgoing queue: resume below the resume level; cut the client
    /// off once the queue has stayed above the pause level for the whole grace period (a reader that
    /// is slow but keeps reading brings it down now and then, and is not cut off).
    private func checkOutbound() {
        let limits = environment.limits
        let queued = environment.transport.queuedBytes(for: connection)
        if queued < limits.outboundResumeBytes {
            outboundOverSince = nil
            outboundTimer?.cancel()
            outboundTimer = nil
            if gate.resume(.outbound) { machine.noteActivity() }
            return
        }
        guard queued > limits.outboundPauseBytes else {
            outboundOverSince = nil
            return
        }
        let since = outboundOverSince ?? .now
        outboundOverSince = since
        guard (ContinuousClock.now - since).seconds > limits.slowReaderGraceSeconds else { return }
        outboundTimer?.cancel()
        outboundTimer = nil
        logger.warning("client does not read what it is sent; closing", metadata: ["queued_bytes": "\(queued)"])
        environment.metrics.increment("speakersync_slow_reader_closes_total")
        endReason = endReason ?? "the client did not read what the server sent"
        run(machine.failed(ProtocolError(.slowReader,
            "\(queued) bytes stayed unread for over \(Int(limits.slowReaderGraceSeconds)) s; read continuously, then resume")))
    }
}
