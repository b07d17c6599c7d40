/// Why an Ogg Opus file could not be read.
public enum OggOpusError: Error, CustomStringConvertible, Sendable, Equatable {
    case notOgg(Int)
    case truncated(String)
    case badChecksum(Int)
    case notOpus(String)
    case unsupported(String)

    public var description: String {
        switch self {
        case .notOgg(let offset): "not an Ogg file (no OggS page at byte \(offset))"
        case .truncated(let what): "the file ends inside a \(what)"
        case .badChecksum(let offset): "the Ogg page at byte \(offset) fails its CRC"
        case .notOpus(let why): "not an Ogg Opus stream: \(why)"
        case .unsupported(let what): "unsupported: \(what)"
        }
    }
}
