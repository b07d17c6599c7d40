import DiarizationScoring
import Foundation
import SessionProtocol
import SpeakerSyncAudio
import WebSocketTransport

/// What a test recording's uploaded file was, as its request and report say it (the row keeps this,
/// never the audio).
struct UploadDescription: Sendable, Equatable {
    var fileName: String?
    var byteCount: Int
    /// The WAV's own format; the audio is mixed to mono (and resampled when the protocol cannot take its rate).
    var sampleRate: Int
    var channelCount: Int
    var audioSeconds: Double
    /// The uploaded RTTM's turns and speakers; nil without one.
    var referenceTurnCount: Int?
    var referenceSpeakerCount: Int?
    /// The server recognises the words (`"asr": "server"`, as for the microphone); otherwise the
    /// sessions get no words and only their turns are compared.
    var serverWords: Bool

    var jsonObject: [String: Any] {
        var object: [String: Any] = [
            "source": "upload", "asr": serverWords ? "server" : "none",
            "file_name": fileName as Any? ?? NSNull(), "bytes": byteCount, "sample_rate": sampleRate, "channels": channelCount,
            "audio_seconds": LiveSessionSnapshot.rounded(audioSeconds),
        ]
        if let referenceTurnCount, let referenceSpeakerCount {
            object["reference"] = ["turns": referenceTurnCount, "speakers": referenceSpeakerCount]
        } else {
            object["reference"] = NSNull()
        }
        return object
    }
}

/// A recording someone uploaded for a test recording: a WAV and, optionally, its reference turns as
/// RTTM, checked when the request arrives (so a bad file is a 4xx, never a failed recording) and held
/// in memory while the recording runs.
///
/// The request is `multipart/form-data` (what a browser's `FormData` and `curl -F` send): a part
/// `audio` (the WAV), an optional part `rttm`, and the settings as fields: `providers` (repeated or
/// comma-separated; or `provider`), `speed`, `device_id`, `asr` (`server` or `none`).
struct UploadedRecording: Sendable {
    /// Mono, at a rate the protocol takes (8–48 kHz).
    var audio: AudioBuffer
    /// The RTTM's turns, or nil without one.
    var reference: [SpeakerSegment]?

    /// The longest upload: each provider streams it in turn, at most 8× real time, and it is held in
    /// memory as float samples while that goes on.
    static let maxSeconds = 1800.0
    /// Less than this is no meeting to diarize (and a WAV with no samples is surely a mistake).
    static let minSeconds = 0.5
    /// The protocol's sample rates: a WAV at one of them streams as it is.
    static let streamableRates = 8000 ... 48000
    /// Studio rates above the protocol's, resampled to 16 kHz (each is a small ratio to 16 kHz, so the
    /// resampler's filter stays small; an arbitrary rate could need thousands of filter phases).
    static let resampledRates: Set<Int> = [64000, 88200, 96000, 176_400, 192_000]
    /// Longest accepted file name (kept in the report; longer ones are cut).
    static let maxFileNameCharacters = 200

    /// Reads and checks an upload; the request (with its `upload` description) and the recording.
    static func parse(_ body: [UInt8], boundary: String, principal: Principal, knownProviders: Set<String>,
                      defaultProvider: String?) throws(APIError) -> (TestRecordingRequest, UploadedRecording) {
        let form = try MultipartForm.parse(body, boundary: boundary)
        var fields: [String: JSONValue] = [:]
        var providers: [JSONValue] = []
        for part in form.parts where !["audio", "rttm"].contains(part.name) {
            guard let text = String(validating: part.body, as: UTF8.self), !text.contains("\0") else {
                throw APIError(status: 400, code: "invalid_text", message: "field \"\(part.name)\" is not UTF-8 text without NUL characters")
            }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch part.name {
            case "speakers", "turns", "seed":
                throw TestRecordingRequest.invalid("\(part.name) applies to synthetic meetings only; an upload is its own meeting")
            case "providers":
                providers += value.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) }
            case "speed":
                // Not a number stays text, so the request's own check says what speed must be.
                fields["speed"] = Double(value).map(JSONValue.number) ?? .string(value)
            default:
                guard fields[part.name] == nil else { throw TestRecordingRequest.invalid("field \(part.name) is given twice") }
                fields[part.name] = .string(value)
            }
        }
        if form.parts.contains(where: { $0.name == "providers" }) { fields["providers"] = .array(providers) }
        var request = try TestRecordingRequest.common(fields, principal: principal, knownProviders: knownProviders,
                                                      defaultProvider: defaultProvider)
        let serverWords: Bool
        switch fields["asr"] {
        case nil, .string("none")?: serverWords = false
        case .string("server")?: serverWords = true
        default: throw TestRecordingRequest.invalid("asr must be \"server\" (the server recognises the words) or \"none\"")
        }

        let audioParts = form.parts(named: "audio")
        guard let audioPart = audioParts.first, !audioPart.body.isEmpty else {
            throw APIError(status: 400, code: "missing_parameter", message: "audio is required: a part named \"audio\" holding a WAV file")
        }
        guard audioParts.count == 1 else { throw TestRecordingRequest.invalid("send one audio part, not \(audioParts.count)") }
        let (audio, format) = try decode(audioPart.body)

        // A browser sends an empty file part for a file input left empty: that is no reference.
        let rttmParts = form.parts(named: "rttm").filter { !$0.body.isEmpty }
        guard rttmParts.count <= 1 else { throw APIError(status: 400, code: "invalid_rttm", message: "send one rttm part, not \(rttmParts.count)") }
        let reference = try rttmParts.first.map { part throws(APIError) in try Self.reference(part.body, audioSeconds: audio.durationSeconds) }
        if request.providers.contains("device"), reference == nil {
            throw TestRecordingRequest.invalid("provider device streams the device's own turns, which an upload has only with an rttm reference")
        }
        request.upload = UploadDescription(
            fileName: audioPart.fileName.map(cleanFileName), byteCount: audioPart.body.count, sampleRate: format.sampleRate,
            channelCount: format.channelCount, audioSeconds: audio.durationSeconds, referenceTurnCount: reference?.count,
            referenceSpeakerCount: reference.map { Set($0.map(\.speaker)).count }, serverWords: serverWords)
        return (request, UploadedRecording(audio: audio, reference: reference))
    }

    /// The WAV as mono audio at a streamable rate, and its format as uploaded.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(APIError) -> (AudioBuffer, WAVFormat) {
        let data = Data(bytes)
        let format: WAVFormat
        let frames: Int
        do {
            (format, frames) = try WAVFile.inspect(data)
        } catch {
            throw APIError(status: 400, code: "invalid_audio", message: "the audio must be a WAV file: \(error)")
        }
        // From the header, before the samples are decoded into memory.
        let seconds = Double(frames) / Double(max(1, format.sampleRate))
        guard seconds <= maxSeconds else {
            throw APIError(status: 413, code: "audio_too_long",
                           message: String(format: "%.0f s of audio; a test recording takes at most %.0f s", seconds, maxSeconds))
        }
        guard streamableRates.contains(format.sampleRate) || resampledRates.contains(format.sampleRate) else {
            throw APIError(status: 400, code: "invalid_audio", message: "the WAV's sample rate is \(format.sampleRate) Hz; send 8000 to 48000 Hz (or 64, 88.2, 96, 176.4 or 192 kHz)")
        }
        guard seconds >= minSeconds else {
            throw APIError(status: 400, code: "invalid_audio", message: String(format: "the WAV holds %.2f s of audio; send at least %.1f s", seconds, minSeconds))
        }
        do {
            var audio = try WAVFile.decode(data)
            if !streamableRates.contains(audio.sampleRate) {
                audio = try StreamingResampler.resample(audio, config: ResamplerConfig(supportedInputRates: 8000 ... 192_000))
            }
            return (audio, format)
        } catch {
            throw APIError(status: 400, code: "invalid_audio", message: "the audio must be a WAV file: \(error)")
        }
    }

    /// The RTTM's turns: one file's SPEAKER lines, none starting after the audio ends (that would be
    /// another recording's reference).
    static func reference(_ bytes: ArraySlice<UInt8>, audioSeconds: Double) throws(APIError) -> [SpeakerSegment] {
        guard let text = String(validating: bytes, as: UTF8.self), !text.contains("\0") else {
            throw APIError(status: 400, code: "invalid_rttm", message: "the reference must be RTTM text in UTF-8")
        }
        let turns = try ReferenceLabelling.turns(rttm: text)
        if let late = turns.first(where: { $0.startSeconds >= audioSeconds }) {
            throw APIError(status: 400, code: "invalid_rttm", message: String(
                format: "a turn of %@ starts at %.3f s, after the audio's end (%.3f s): is this the recording's reference?",
                late.speaker, late.startSeconds, audioSeconds))
        }
        return turns
    }

    /// The name as a person would read it: no control characters, at most `maxFileNameCharacters`.
    static func cleanFileName(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) })
            .prefix(maxFileNameCharacters))
    }

    /// The recording as a test meeting: its audio, no device words (the server recognises them, or
    /// there are none), the reference turns, and all of it scored.
    func meeting(recordingID: String) -> TestMeeting {
        TestMeeting(id: "upload-\(recordingID)", audio: audio, words: [], reference: reference ?? [],
                    uem: [TimeSpan(startSeconds: 0, endSeconds: audio.durationSeconds)], referenceWords: [])
    }
}
