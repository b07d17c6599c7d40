/// A text message from a Deepgram client, and what the session does with it. Binary messages are the
/// audio itself and pass unchanged (linear16 is SpeakerSync's `pcm_s16le`).
public enum DeepgramControl: Hashable, Sendable {
    /// `KeepAlive`: the session's `keepalive`.
    case keepAlive
    /// `Finalize`: every word held back goes out as final, with `from_finalize`; the stream goes on.
    case finalize
    /// `CloseStream`: the session's `finalize`: the last words, `Metadata`, then close 1000.
    case closeStream
    /// Anything else: answered with a Deepgram `Error` message; the stream goes on.
    case refused(code: String, message: String)

    /// The session's own message for it (nil: none).
    public var sessionText: String? {
        switch self {
        case .keepAlive, .finalize: #"{"type":"keepalive"}"#
        case .closeStream: #"{"type":"finalize"}"#
        case .refused: nil
        }
    }

    public init(text: String) {
        guard case .object(let members)? = try? JSONParser(maxDepth: 8).parse(text) else {
            self = .refused(code: "malformed_json", message: "a text message must be a JSON object with a \"type\"")
            return
        }
        guard case .string(let type)? = members["type"] else {
            self = .refused(code: "missing_field", message: "the message has no \"type\"")
            return
        }
        switch type {
        case "KeepAlive": self = .keepAlive
        case "Finalize": self = .finalize
        case "CloseStream": self = .closeStream
        default:
            self = .refused(code: "unknown_type", message: "message type \"\(type)\" is not supported; "
                + "SpeakerSync takes KeepAlive, Finalize and CloseStream (docs/deepgram.md)")
        }
    }
}
