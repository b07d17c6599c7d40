/// RFC 6455's rules for the close frames a client sends (§5.5.1, §7.4), and the codes the transport
/// itself closes with. lws 4.1.6 checks only part of them (it turns codes below 3000 that RFC 6455 does
/// not define into 1002 before the application sees the frame); the server checks the rest here.
enum CloseFrameRules {
    /// The transport fails a connection with this when the peer breaks the framing rules (an unmasked
    /// frame, a malformed close or control frame, reserved bits or opcodes).
    static let protocolError: UInt16 = 1002
    /// lws closes with this when a text message is not valid UTF-8.
    static let invalidPayload: UInt16 = 1007

    /// A code a peer may send in a close frame: 1000–1003 and 1007–1011 (RFC 6455 §7.4.1), 1012–1014
    /// (registered with IANA since), and 3000–4999 (libraries and applications). 1004–1006 and 1015
    /// are reserved and must never be sent; everything else is unassigned.
    static func isValidReceived(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// Why a close frame's payload breaks the rules, or nil when it may be answered with an echo.
    /// An empty payload is valid (no code given); one byte is not (a code takes two); the reason
    /// after the code must be UTF-8 (§5.5.1).
    static func violation(in payload: UnsafeRawBufferPointer) -> String? {
        guard !payload.isEmpty else { return nil }
        guard payload.count >= 2 else { return "close frame payload of 1 byte" }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard isValidReceived(code) else { return "invalid close code \(code)" }
        guard String(validating: payload[2...], as: UTF8.self) != nil else { return "close reason is not UTF-8" }
        return nil
    }
}
