import Testing

@testable import SessionProtocol

/// A connection opened with a device token is bound to that device: the start may omit device_id
/// (the token's is used) or must name the same device.
@Suite struct DeviceBindingTests {
    func closes(_ actions: [SessionAction]) -> [UInt16] {
        actions.compactMap { if case .close(let code, _) = $0 { return code } else { return nil } }
    }

    func errorCodes(_ actions: [SessionAction]) -> [String] {
        actions.compactMap { if case .send(.error(let error)) = $0 { return error.code.rawValue } else { return nil } }
    }

    @Test func aStartWithoutDeviceIDTakesTheBoundDevice() {
        var machine = SessionStateMachine()
        #expect(machine.opened(query: [:], deviceID: "phone-1").isEmpty)
        let actions = machine.receivedText(#"{"type":"start","provider":"device","sample_rate":16000,"encoding":"pcm_s16le"}"#)
        #expect(actions == [.begin(StartRequest(deviceID: "phone-1", provider: "device", sampleRate: 16_000, encoding: .pcmS16LE))])
    }

    @Test func aStartNamingTheBoundDeviceBegins() {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:], deviceID: "phone-1")
        let actions = machine.receivedText(#"{"type":"start","device_id":"phone-1","provider":"device","sample_rate":16000,"encoding":"pcm_s16le"}"#)
        #expect(machine.state == .active)
        #expect(closes(actions).isEmpty)
    }

    @Test func anotherDeviceInTheStartIsRefusedAndCloses1008() {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:], deviceID: "phone-1")
        let actions = machine.receivedText(#"{"type":"start","device_id":"phone-2","provider":"device","sample_rate":16000,"encoding":"pcm_s16le"}"#)
        #expect(errorCodes(actions) == ["device_mismatch"])
        #expect(closes(actions) == [1008])
        #expect(machine.state == .closed)
    }

    @Test func anotherDeviceInTheQueryIsRefusedAtOnce() {
        var machine = SessionStateMachine()
        let actions = machine.opened(query: ["device_id": "phone-2", "provider": "device"], deviceID: "phone-1")
        #expect(errorCodes(actions) == ["device_mismatch"])
        #expect(closes(actions) == [1008])
    }

    @Test func aQueryWithoutDeviceIDIsCompletedByTheBinding() {
        var machine = SessionStateMachine()
        let actions = machine.opened(query: ["provider": "device", "sample_rate": "16000", "encoding": "pcm_s16le", "token": "sst_x"],
                                     deviceID: "phone-1")
        #expect(actions == [.begin(StartRequest(deviceID: "phone-1", provider: "device", sampleRate: 16_000, encoding: .pcmS16LE))])
    }

    @Test func revocationAndSessionLimitErrorsCloseWithTheirCodes() {
        #expect(ProtocolErrorCode.credentialRevoked.disposition().closeCode == CloseCode.credentialRevoked)
        #expect(ProtocolErrorCode.tooManySessions.disposition().closeCode == CloseCode.tooManySessions)
        #expect(ProtocolErrorCode.conversationNotFound.disposition().closeCode == CloseCode.invalidPayload)
        #expect(CloseCode.credentialRevoked == 4003 && CloseCode.tooManySessions == 4029)
    }
}
