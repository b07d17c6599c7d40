/// A failure while generating or synthesising a meeting; `code` is stable.
public struct SynthError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The script or generator arguments are unusable (unknown speaker, empty turn, bad word).
        case invalidScript = "invalid_script"
        /// The espeak-ng executable was not found.
        case espeakNotFound = "espeak_not_found"
        /// espeak-ng ran but failed or produced no usable audio.
        case espeakFailed = "espeak_failed"
        /// The festival executable was not found.
        case festivalNotFound = "festival_not_found"
        /// Festival ran but failed (a missing voice package, for one) or produced no usable audio.
        case festivalFailed = "festival_failed"
        /// Writing an output file failed.
        case io = "io_error"
        /// A truth file (RTTM, words JSON) could not be parsed.
        case invalidFile = "invalid_file"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
