import Foundation
import SpeakerSyncAudio
import SpeakerSyncStore

/// A conversation's stored audio put back together: the chunks' samples on the conversation
/// timeline, silence where nothing was stored (a reconnect that resumed later than the stored end).
struct StoredAudio: Equatable {
    var sampleRate: Int
    /// From the timeline's 0 to the end of the last chunk.
    var samples: [Int16]

    var durationSeconds: Double { Double(samples.count) / Double(sampleRate) }

    /// `decode` turns one chunk's FLAC back into its samples. Chunks of different sample rates
    /// (a conversation resumed by a device at another rate) cannot share one timeline of samples.
    static func assemble(_ chunks: [StoredAudioChunk], decode: (StoredAudioChunk) throws -> [Int16]) throws(APIError) -> StoredAudio? {
        guard let first = chunks.first else { return nil }
        guard chunks.allSatisfy({ $0.sampleRate == first.sampleRate }) else {
            let rates = Set(chunks.map(\.sampleRate)).sorted().map(String.init).joined(separator: ", ")
            throw APIError(status: 409, code: "mixed_sample_rates", message: "the stored audio was recorded at several sample rates (\(rates) Hz)")
        }
        let end = chunks.map { $0.startSample + Int64($0.sampleCount) }.max() ?? 0
        var samples = [Int16](repeating: 0, count: Int(end))
        for chunk in chunks.sorted(by: { $0.startSample < $1.startSample }) {
            let decoded: [Int16]
            do {
                decoded = try decode(chunk)
            } catch {
                throw APIError(status: 500, code: "audio_corrupt", message: "a stored audio chunk at sample \(chunk.startSample) cannot be decoded: \(error)")
            }
            let start = Int(chunk.startSample)
            samples.replaceSubrange(start..<(start + decoded.count), with: decoded)
        }
        return StoredAudio(sampleRate: first.sampleRate, samples: samples)
    }

    /// A 16-bit mono WAV file of it (the project's WAVWriter; its ×32768 rounding gives back these
    /// exact samples from their /32768 floats).
    var wav: [UInt8] {
        Array(WAVWriter.encode(AudioBuffer(samples: samples.map { Float($0) / 32_768 }, sampleRate: sampleRate), format: .pcm16))
    }
}

/// One `Range: bytes=…` request over a body of `length` bytes (RFC 9110 §14.1.2), the single-range
/// forms only: `a-b`, `a-` and `-n`. nil for a header this does not serve (the whole body is then
/// sent, as the RFC allows); `.unsatisfiable` for a range wholly outside the body (416).
enum ByteRange: Equatable {
    case range(ClosedRange<Int>)
    case unsatisfiable

    static func parse(_ header: String?, length: Int) -> ByteRange? {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0 else { return nil }
            guard length > 0 else { return .unsatisfiable }
            return .range(max(0, length - suffix)...(length - 1))
        }
        guard let first = Int(parts[0]), first >= 0 else { return nil }
        guard first < length else { return .unsatisfiable }
        if parts[1].isEmpty { return .range(first...(length - 1)) }
        guard let last = Int(parts[1]), last >= first else { return nil }
        return .range(first...min(last, length - 1))
    }
}
