import SessionProtocol

/// A relabelling asked for over HTTP (the console): the same corrections as the protocol's
/// `rename_speaker` and `merge_speakers` messages, for a stored or a live conversation.
enum SpeakerChange: Sendable, Equatable {
    case rename(to: String)
    case merge(into: String)

    /// `{"name":"Alice"}` or `{"merge_into":"Speaker 2"}`, exactly one of them.
    static func parse(_ body: [UInt8]) throws(APIError) -> SpeakerChange {
        guard case .object(let object)? = try? JSONParser().parse(bytes: body) else {
            throw APIError(status: 400, code: "invalid_parameter", message: #"the body must be {"name":"…"} or {"merge_into":"…"}"#)
        }
        switch (object["name"], object["merge_into"]) {
        case (.string(let name)?, nil): return .rename(to: name)
        case (nil, .string(let target)?): return .merge(into: target)
        default: throw APIError(status: 400, code: "invalid_parameter", message: #"give exactly one of "name" (a string) or "merge_into" (a label)"#)
        }
    }

    /// Applies the change to `registry`; the rows it changed and, for a merge, the labels (resolved).
    func apply(to registry: inout SpeakerRegistry, label: String) throws(APIError) -> (changed: [String], merged: (from: String, into: String)?) {
        do throws(SpeakerRegistryError) {
            switch self {
            case .rename(let name):
                let speaker = try registry.rename(label, to: name)
                return ([speaker.label], nil)
            case .merge(let target):
                let merged = try registry.merge(label, into: target)
                return ([merged.from, merged.into], merged)
            }
        } catch {
            switch error.code {
            case .unknownSpeaker: throw APIError(status: 404, code: "speaker_not_found", message: error.message)
            case .invalidName: throw APIError(status: 400, code: "invalid_name", message: error.message)
            case .invalidMerge: throw APIError(status: 400, code: "invalid_merge", message: error.message)
            }
        }
    }
}
