import Testing

@testable import SessionProtocol

/// Text PostgreSQL cannot store is refused at the protocol's edge as `invalid_text`, naming the
/// field: a refused start closes the session (1007); any other message is dropped, the session goes on.
@Suite struct InvalidTextTests {
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
        _ = machine.receivedText(#"{"type":"start","device_id":"dev","provider":"device","sample_rate":16000,"encoding":"pcm_s16le"}"#)
        return machine
    }

    @Test(arguments: [
        (#"{"type":"start","device_id":"de\u0000v","provider":"device","sample_rate":16000,"encoding":"pcm_s16le"}"#, "device_id"),
        (#"{"type":"start","device_id":"dev","language":"en\u0000","provider":"device","sample_rate":16000,"encoding":"pcm_s16le"}"#, "language"),
        (#"{"type":"start","device_id":"dev","provider":"device","sample_rate":16000,"encoding":"pcm_s16le","options":{"k":"\ud800"}}"#, "options.k"),
    ])
    func aStartWithSuchTextIsRejectedAndClosed(text: String, field: String) {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:])
        let actions = machine.receivedText(text)
        #expect(errors(actions).map(\.code) == [.invalidText])
        #expect(errors(actions).first?.fatal == true)
        #expect(errors(actions).first?.message.contains("\"\(field)\"") == true)
        #expect(closes(actions) == [CloseCode.invalidPayload])
        #expect(!actions.contains { if case .begin = $0 { true } else { false } })
        #expect(machine.state == .closed)
    }

    @Test func aWordsMessageWithSuchTextIsDroppedWholeAndNamesTheWord() {
        var machine = started()
        let actions = machine.receivedText(
            #"{"type":"words","result_id":"r7","final":true,"words":[{"text":"ok","start":0,"end":0.2},{"text":"he\u0000llo","start":0.3,"end":0.5}]}"#)
        #expect(errors(actions).map(\.code) == [.invalidText])
        #expect(errors(actions).first?.fatal == false)
        let message = errors(actions).first?.message ?? ""
        #expect(message.contains("r7"))
        #expect(message.contains("\"words[1].text\""))
        #expect(!actions.contains { if case .words = $0 { true } else { false } })
        #expect(machine.state == .active)
    }

    @Test func aRenameToSuchANameIsRefused() {
        var machine = started()
        let actions = machine.receivedText(#"{"type":"rename_speaker","speaker":"Speaker 1","name":"A\u0000B"}"#)
        #expect(errors(actions).map(\.code) == [.invalidText])
        #expect(machine.state == .active)
    }

    @Test func aQueryStartWithSuchAFieldIsRejected() {
        var machine = SessionStateMachine()
        let actions = machine.opened(query: ["provider": "device", "sample_rate": "16000", "encoding": "pcm_s16le"],
                                     invalidTextParameters: ["device_id"])
        #expect(errors(actions).map(\.code) == [.invalidText])
        #expect(closes(actions) == [CloseCode.invalidPayload])
    }

    @Test func aQueryParameterThatIsNoStartFieldIsIgnored() {
        var machine = SessionStateMachine()
        let actions = machine.opened(query: [:], invalidTextParameters: ["utm_source"])
        #expect(actions.isEmpty)
        #expect(machine.state == .awaitingStart)
    }

    @Test func queryOptionsWithSuchTextAreInvalidText() {
        var machine = SessionStateMachine()
        let actions = machine.opened(query: ["device_id": "dev", "provider": "device", "sample_rate": "16000", "encoding": "pcm_s16le",
                                             "options": #"{"k":"\u0000"}"#])
        #expect(errors(actions).map(\.code) == [.invalidText])
        #expect(closes(actions) == [CloseCode.invalidPayload])
    }

    @Test func storageUnavailableAtTheStartClosesTryAgainLater() {
        var machine = started()
        let actions = machine.startFailed(ProtocolError(.storageUnavailable, "down"))
        #expect(closes(actions) == [CloseCode.tryAgainLater])
        #expect(actions.contains { if case .teardown = $0 { true } else { false } })
        // Later in a session the same code only reports an outage.
        var other = started()
        #expect(closes(other.storageFailed(message: "down")).isEmpty)
    }
}
