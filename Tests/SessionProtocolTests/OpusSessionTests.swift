import Testing

@testable import SessionProtocol

/// A session with `encoding: "opus"`: one packet per binary message, counted from its TOC byte.
@Suite struct OpusSessionTests {
    static func started(rate: Int = 16_000) -> SessionStateMachine {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:])
        _ = machine.receivedText(
            #"{"type":"start","device_id":"dev","provider":"device","sample_rate":\#(rate),"encoding":"opus"}"#)
        return machine
    }

    /// A 20 ms CELT fullband packet, code 0.
    static let packet: [UInt8] = [31 << 3, 0x12, 0x34, 0x56]

    @Test func eachPacketIsPassedOnWithItsSampleCount() {
        var machine = Self.started()
        #expect(machine.state == .active)
        #expect(machine.receivedBinary(Self.packet) == [.encodedAudio(packet: Self.packet, sampleCount: 320)])
        // Two 60 ms SILK frames (code 1): 120 ms.
        let long: [UInt8] = [3 << 3 | 1, 1, 2]
        #expect(machine.receivedBinary(long) == [.encodedAudio(packet: long, sampleCount: 1_920)])
        #expect(machine.receivedSampleCount == 2_240)
        #expect(machine.receivedAudioSeconds == 0.14)
    }

    @Test(arguments: [8_000, 12_000, 24_000, 48_000])
    func samplesAreCountedAtTheSessionRate(rate: Int) {
        var machine = Self.started(rate: rate)
        #expect(machine.receivedBinary(Self.packet) == [.encodedAudio(packet: Self.packet, sampleCount: rate / 50)])
    }

    @Test func anInvalidPacketIsDroppedWithANonFatalError() {
        var machine = Self.started()
        for bad: [UInt8] in [[], [31 << 3 | 3, 0], [31 << 3 | 3, 7], [31 << 3 | 1, 1, 2, 3]] {
            let actions = machine.receivedBinary(bad)
            #expect(actions.count == 1)
            guard case .send(.error(let error)) = actions.first else {
                Issue.record("expected an error, got \(actions)")
                continue
            }
            #expect(error.code == .invalidAudio)
            #expect(!error.fatal)
        }
        #expect(machine.state == .active)
        #expect(machine.droppedPackets == 4)
        #expect(machine.receivedSampleCount == 0)
        // The session goes on.
        #expect(machine.receivedBinary(Self.packet) == [.encodedAudio(packet: Self.packet, sampleCount: 320)])
    }

    @Test func opusAtARateOpusCannotDecodeClosesTheSession() {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:])
        let actions = machine.receivedText(
            #"{"type":"start","device_id":"dev","provider":"device","sample_rate":44100,"encoding":"opus"}"#)
        #expect(actions.contains(.close(code: CloseCode.unsupportedData, reason: "unsupported_sample_rate")))
        #expect(machine.state == .closed)
    }

    @Test func opusInTheQueryIsCheckedOnceTheStartCompletesIt() {
        var machine = SessionStateMachine()
        #expect(machine.opened(query: ["encoding": "opus", "sample_rate": "44100"]).isEmpty)
        let actions = machine.receivedText(#"{"type":"start","device_id":"dev","provider":"device","sample_rate":48000}"#)
        #expect(actions == [.begin(StartRequest(deviceID: "dev", provider: "device", sampleRate: 48_000, encoding: .opus))])
    }

    @Test func pcmSessionsAreUnchanged() {
        var machine = SessionStateMachine()
        _ = machine.opened(query: [:])
        _ = machine.receivedText(SessionStateMachineTests.startText)
        #expect(machine.receivedBinary([0, 0x40]) == [.audio(samples: [0.5])])
    }
}
