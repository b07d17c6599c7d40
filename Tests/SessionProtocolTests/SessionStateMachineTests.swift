import Testing

@testable import SessionProtocol

@Suite struct SessionStateMachineTests {
    static let startText =
        #"{"type":"start","device_id":"dev","provider":"device","sample_rate":16000,"encoding":"pcm_s16le"}"#
    static let start = StartRequest(deviceID: "dev", provider: "device", sampleRate: 16_000, encoding: .pcmS16LE)

    /// The error frames among `actions`.
    func errors(_ actions: [SessionAction]) -> [WireError] {
        actions.compactMap { action in
            if case .send(.error(let error)) = action { return error }
            return nil
        }
    }

    func closes(_ actions: [SessionAction]) -> [UInt16] {
        actions.compactMap { action in
            if case .close(let code, _) = action { return code }
            return nil
        }
    }

    func started() -> SessionStateMachine {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:])
        _ = machine.receivedText(Self.startText)
        return machine
    }

    @Test func startMessageBegins() {
        var machine = SessionStateMachine()
        #expect(machine.opened(query: [:]).isEmpty)
        #expect(machine.state == .awaitingStart)
        #expect(machine.receivedText(Self.startText) == [.begin(Self.start)])
        #expect(machine.state == .active)
        #expect(machine.start == Self.start)
    }

    @Test func completeQueryBeginsAtOpen() {
        var machine = SessionStateMachine()
        let actions = machine.opened(query: [
            "device_id": "dev", "provider": "device", "sample_rate": "16000", "encoding": "pcm_s16le",
        ])
        #expect(actions == [.begin(Self.start)])
        #expect(machine.state == .active)
        // The session has begun, so a start message is a second start.
        let again = machine.receivedText(Self.startText)
        #expect(errors(again).map(\.code) == [.alreadyStarted])
        #expect(machine.state == .active)
    }

    @Test func partialQueryIsCompletedAndOverriddenByStart() {
        var machine = SessionStateMachine()
        #expect(machine.opened(query: ["device_id": "q-dev", "provider": "none", "sample_rate": "8000"]).isEmpty)
        let actions = machine.receivedText(#"{"type":"start","provider":"device","encoding":"pcm_f32le"}"#)
        #expect(
            actions == [
                .begin(StartRequest(deviceID: "q-dev", provider: "device", sampleRate: 8_000, encoding: .pcmF32LE))
            ])
    }

    @Test func badQueryClosesAtOpen() {
        var machine = SessionStateMachine()
        let actions = machine.opened(query: ["encoding": "alaw"])
        #expect(errors(actions).map(\.code) == [.unsupportedEncoding])
        #expect(errors(actions).map(\.fatal) == [true])
        #expect(closes(actions) == [CloseCode.unsupportedData])
        #expect(!actions.contains { if case .teardown = $0 { true } else { false } })
        #expect(machine.state == .closed)
        #expect(machine.receivedText(Self.startText).isEmpty)
    }

    @Test(arguments: [
        (#"{"type":"start","device_id":"d","provider":"p","sample_rate":16000,"encoding":"ulaw"}"#,
         ProtocolErrorCode.unsupportedEncoding, CloseCode.unsupportedData),
        (#"{"type":"start","device_id":"d","provider":"p","sample_rate":192000,"encoding":"pcm_s16le"}"#,
         .unsupportedSampleRate, CloseCode.unsupportedData),
        (#"{"type":"start","provider":"p","sample_rate":16000,"encoding":"pcm_s16le"}"#,
         .missingField, CloseCode.invalidPayload),
        (#"{"type":"start","device_id":[],"provider":"p","sample_rate":16000,"encoding":"pcm_s16le"}"#,
         .invalidField, CloseCode.invalidPayload),
        (#"{"type":"start","conversation_id":"x?","device_id":"d","provider":"p","sample_rate":16000,"encoding":"pcm_s16le"}"#,
         .invalidConversationID, CloseCode.invalidPayload),
    ])
    func rejectedStartCloses(text: String, code: ProtocolErrorCode, closeCode: UInt16) {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:])
        let actions = machine.receivedText(text)
        #expect(errors(actions).map(\.code) == [code])
        #expect(errors(actions).map(\.fatal) == [true])
        #expect(closes(actions) == [closeCode])
        #expect(machine.state == .closed)
    }

    @Test func unknownProviderClosesWithPolicyViolation() {
        var machine = SessionStateMachine(config: SessionConfig(knownProviders: ["none"]))
        let actions = machine.receivedText(Self.startText)
        #expect(errors(actions).map(\.code) == [.unknownProvider])
        #expect(closes(actions) == [CloseCode.policyViolation])
    }

    @Test func audioBeforeStartIsDroppedAndReportedOnce() {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:])
        let first = machine.receivedBinary([1, 2, 3, 4])
        #expect(errors(first).map(\.code) == [.audioBeforeStart])
        #expect(errors(first).map(\.fatal) == [false])
        #expect(closes(first).isEmpty)
        #expect(machine.receivedBinary([5, 6]).isEmpty)
        #expect(machine.droppedAudioBytes == 6)
        #expect(machine.state == .awaitingStart)
        // The session still starts, and its timeline begins with the first audio after the start.
        #expect(machine.receivedText(Self.startText) == [.begin(Self.start)])
        #expect(machine.receivedBinary([0x00, 0x40]) == [.audio(samples: [0.5])])
        #expect(machine.receivedSampleCount == 1)
    }

    @Test func messagesBeforeStartAreNotStarted() {
        var machine = SessionStateMachine()
        for text in [
            #"{"type":"words","result_id":"r","final":true,"words":[]}"#, #"{"type":"segments","segments":[]}"#,
            #"{"type":"rename_speaker","speaker":"Speaker 1","name":"A"}"#,
            #"{"type":"merge_speakers","from":"Speaker 2","into":"Speaker 1"}"#,
        ] {
            let actions = machine.receivedText(text)
            #expect(errors(actions).map(\.code) == [.notStarted])
            #expect(closes(actions).isEmpty)
        }
        #expect(machine.receivedText(#"{"type":"keepalive"}"#).isEmpty)
        #expect(machine.state == .awaitingStart)
    }

    @Test func finalizeBeforeStartClosesNormally() {
        var machine = SessionStateMachine()
        #expect(machine.receivedText(#"{"type":"finalize"}"#) == [.close(code: 1000, reason: "finalized")])
        #expect(machine.state == .closed)
    }

    @Test func activeSessionForwardsMessagesAndAudio() {
        var machine = started()
        #expect(
            machine.receivedText(#"{"type":"words","result_id":"r1","final":true,"words":[{"text":"hi","start":0,"end":0.25}]}"#)
                == [.words(WordsMessage(resultID: "r1", isFinal: true, words: [WireInputWord(text: "hi", startSeconds: 0, endSeconds: 0.25)]))])
        #expect(
            machine.receivedText(#"{"type":"segments","segments":[{"speaker":"s0","start":0,"end":1}]}"#)
                == [.segments([DeviceSegment(speaker: "s0", startSeconds: 0, endSeconds: 1)])])
        #expect(
            machine.receivedText(#"{"type":"rename_speaker","speaker":"Speaker 1","name":"Ana"}"#)
                == [.renameSpeaker(speaker: "Speaker 1", name: "Ana")])
        #expect(
            machine.receivedText(#"{"type":"merge_speakers","from":"Speaker 2","into":"Speaker 1"}"#)
                == [.mergeSpeakers(from: "Speaker 2", into: "Speaker 1")])
        // Words ahead of the received audio are accepted (devices may run slightly ahead).
        #expect(machine.receivedAudioSeconds == 0)
        let ahead = machine.receivedText(#"{"type":"words","result_id":"r2","final":false,"words":[{"text":"x","start":50,"end":51}]}"#)
        #expect(errors(ahead).isEmpty)
        // 16000 samples = 1 s, split mid-sample.
        let second = [UInt8](repeating: 0, count: 32_000)
        var samples = 0
        for action in machine.receivedBinary(Array(second[0..<12_345])) + machine.receivedBinary(Array(second[12_345...])) {
            if case .audio(let decoded) = action { samples += decoded.count }
        }
        #expect(samples == 16_000)
        #expect(machine.receivedAudioSeconds == 1)
    }

    @Test func invalidMessagesInAnActiveSessionContinue() {
        var machine = started()
        for (text, code) in [
            ("not json", ProtocolErrorCode.malformedJSON),
            (#"{"type":"shout"}"#, .unknownType),
            (#"{"type":"words","final":true,"words":[]}"#, .missingField),
            (#"{"type":"words","result_id":"r","final":"yes","words":[]}"#, .invalidField),
            (#"{"type":"words","result_id":"r","final":true,"words":[{"text":"a","start":1,"end":0.5}]}"#, .invalidTimestamp),
            (Self.startText, .alreadyStarted),
        ] {
            let actions = machine.receivedText(text)
            #expect(errors(actions).map(\.code) == [code], "\(text)")
            #expect(errors(actions).map(\.fatal) == [false])
            #expect(closes(actions).isEmpty)
        }
        #expect(machine.state == .active)
    }

    @Test func finalizeLifecycle() {
        var machine = started()
        // A trailing odd byte: one and a half samples.
        #expect(machine.receivedBinary([0x00, 0x40, 0x12]) == [.audio(samples: [0.5])])
        #expect(machine.receivedText(#"{"type":"finalize"}"#) == [.finalize])
        #expect(machine.state == .finalizing)
        #expect(machine.droppedTrailingBytes == 1)
        // Everything after finalize is refused, without closing; keepalive is harmless.
        let words = machine.receivedText(#"{"type":"words","result_id":"r","final":true,"words":[]}"#)
        #expect(errors(words).map(\.code) == [.sessionFinalized])
        #expect(errors(machine.receivedText(#"{"type":"finalize"}"#)).map(\.code) == [.sessionFinalized])
        #expect(errors(machine.receivedBinary([1, 2])).map(\.code) == [.sessionFinalized])
        #expect(machine.receivedBinary([1, 2]).isEmpty)
        #expect(machine.receivedText(#"{"type":"keepalive"}"#).isEmpty)
        #expect(machine.idleTimeout().isEmpty)
        // The runner sends the final transcript, then reports completion.
        let final = machine.transcriptUpdate(upserted: [], removed: [], isFinal: true)
        #expect(final == [.send(.transcript(TranscriptUpdate(revision: 1, upserted: [], removed: [], isFinal: true)))])
        #expect(machine.finalizeCompleted() == [.close(code: CloseCode.normal, reason: "finalized")])
        #expect(machine.state == .closed)
        #expect(machine.receivedText(#"{"type":"keepalive"}"#).isEmpty)
        #expect(machine.transcriptUpdate(upserted: [], removed: [], isFinal: false).isEmpty)
        #expect(machine.finalizeCompleted().isEmpty)
    }

    @Test func oversizedFramesClose1009() {
        var machine = started()
        let actions = machine.receivedTooLarge(byteCount: 50_000_000)
        #expect(errors(actions).map(\.code) == [.frameTooLarge])
        #expect(closes(actions) == [CloseCode.messageTooBig])
        #expect(actions.last == .teardown(.error(.frameTooLarge)))
        #expect(machine.state == .closed)

        var small = SessionStateMachine(config: SessionConfig(maxTextFrameBytes: 100, maxBinaryFrameBytes: 10))
        _ = small.receivedText(Self.startText)
        #expect(closes(small.receivedBinary([UInt8](repeating: 0, count: 11))) == [CloseCode.messageTooBig])
        var smallText = SessionStateMachine(config: SessionConfig(maxTextFrameBytes: 100))
        #expect(closes(smallText.receivedText(String(repeating: " ", count: 101))) == [CloseCode.messageTooBig])
    }

    @Test func keepaliveResetsIdle() {
        var machine = started()
        #expect(machine.idleTimeout().isEmpty, "the start counts as activity")
        #expect(machine.receivedText(#"{"type":"keepalive"}"#).isEmpty)
        #expect(machine.idleTimeout().isEmpty)
        _ = machine.receivedBinary([0, 0])
        #expect(machine.idleTimeout().isEmpty)
        let actions = machine.idleTimeout()
        #expect(errors(actions).map(\.code) == [.idleTimeout])
        #expect(closes(actions) == [CloseCode.idleTimeout])
        #expect(actions.last == .teardown(.idleTimeout))
        #expect(machine.state == .closed)
    }

    @Test func silentConnectionWithoutStartTimesOut() {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:])
        let actions = machine.idleTimeout()
        #expect(closes(actions) == [CloseCode.idleTimeout])
        #expect(!actions.contains(.teardown(.idleTimeout)), "nothing began, nothing to tear down")
    }

    @Test func peerCloseTearsDownOnlyAnActiveSession() {
        var active = started()
        #expect(active.peerClosed() == [.teardown(.peerClosed)])
        #expect(active.peerClosed().isEmpty)
        var waiting = SessionStateMachine()
        #expect(waiting.peerClosed().isEmpty)
        var finalizing = started()
        _ = finalizing.receivedText(#"{"type":"finalize"}"#)
        #expect(finalizing.peerClosed().isEmpty)
        #expect(finalizing.finalizeCompleted().isEmpty, "no close frame to a peer that is gone")
    }

    @Test func storageOutageIsReportedOncePerOutage() {
        var machine = started()
        let first = machine.storageFailed(message: "connection refused")
        #expect(errors(first) == [WireError(code: .storageUnavailable, message: "connection refused", fatal: false)])
        #expect(machine.storageFailed(message: "again").isEmpty)
        machine.storageRecovered()
        #expect(errors(machine.storageFailed(message: "later")).map(\.code) == [.storageUnavailable])
        #expect(machine.state == .active)
    }

    @Test func serverSideErrorsFollowTheirDisposition() {
        var machine = started()
        let speaker = machine.failed(ProtocolError(.unknownSpeaker, "no Speaker 9"))
        #expect(errors(speaker).map(\.fatal) == [false])
        #expect(machine.state == .active)
        let provider = machine.failed(ProtocolError(.providerFailed, "plugin returned -3"))
        #expect(errors(provider).map(\.fatal) == [true])
        #expect(closes(provider) == [CloseCode.internalError])
        #expect(provider.last == .teardown(.error(.providerFailed)))
        #expect(machine.failed(ProtocolError(.internalError, "x")).isEmpty)
    }

    @Test func transcriptRevisionsIncrease() {
        var machine = started()
        let revisions = (0..<5).flatMap { _ in machine.transcriptUpdate(upserted: [], removed: ["u1"], isFinal: false) }
            .compactMap { action -> UInt64? in
                if case .send(.transcript(let update)) = action { return update.revision }
                return nil
            }
        #expect(revisions == [1, 2, 3, 4, 5])
        #expect(machine.transcriptRevision == 5)
    }

    /// In a session whose words come from the server, a device's `words` message is refused with
    /// `asr_conflict` and dropped; the session and its other messages go on.
    @Test func wordsInAServerASRSessionAreAConflict() {
        var machine = SessionStateMachine()
        _ = machine.opened(query: ["asr": "server"])
        let begun = machine.receivedText(Self.startText)
        var expected = Self.start
        expected.asr = .server
        #expect(begun == [.begin(expected)])
        let actions = machine.receivedText(#"{"type":"words","result_id":"r1","final":true,"words":[{"text":"hi","start":0,"end":0.2}]}"#)
        #expect(errors(actions).map(\.code) == [.asrConflict])
        #expect(errors(actions).allSatisfy { !$0.fatal })
        #expect(closes(actions).isEmpty)
        #expect(machine.state == .active)
        #expect(machine.receivedText(#"{"type":"rename_speaker","speaker":"Speaker 1","name":"Anna"}"#) == [.renameSpeaker(speaker: "Speaker 1", name: "Anna")])
        #expect(machine.receivedBinary([0, 0, 0, 0]) == [.audio(samples: [0, 0])])
        // A device-ASR session takes the same message.
        var device = started()
        #expect(errors(device.receivedText(#"{"type":"words","result_id":"r1","final":true,"words":[]}"#)).isEmpty)
    }

    @Test func everyErrorCodeHasADocumentedDisposition() {
        // Fatal codes close with their RFC 6455 or application close code, never 1000.
        for code in ProtocolErrorCode.allCases {
            for rejectingStart in [false, true] {
                if let close = code.disposition(rejectingStart: rejectingStart).closeCode {
                    #expect([1001, 1003, 1007, 1008, 1009, 1011, 4000, 4001, 4003, 4008, 4009, 4013, 4029].contains(close), "\(code)")
                }
            }
        }
        #expect(ProtocolErrorCode.missingField.disposition() == .continues)
        #expect(ProtocolErrorCode.missingField.disposition(rejectingStart: true) == .closes(1007))
        #expect(ProtocolErrorCode.storageUnavailable.disposition() == .continues)
        #expect(ProtocolErrorCode.storageUnavailable.disposition(rejectingStart: true) == .closes(4013))
        #expect(ProtocolErrorCode.invalidText.disposition() == .continues)
        #expect(ProtocolErrorCode.invalidText.disposition(rejectingStart: true) == .closes(1007))
        #expect(ProtocolErrorCode.storageRejected.disposition() == .closes(1011))
        #expect(ProtocolErrorCode.serverStopping.disposition() == .closes(1001))
        #expect(ProtocolErrorCode.slowReader.disposition() == .closes(4008))
        #expect(ProtocolErrorCode.invalidOptions.disposition() == .closes(1007))
        #expect(ProtocolErrorCode.providerFailed.disposition() == .closes(1011))
        #expect(ProtocolErrorCode.providerUnavailable.disposition() == .closes(4001))
        #expect(ProtocolErrorCode.asrConflict.disposition() == .continues)
        #expect(ProtocolErrorCode.asrUnavailable.disposition() == .closes(4001))
    }
}
