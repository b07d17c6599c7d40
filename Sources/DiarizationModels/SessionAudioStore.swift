#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A session's audio kept for a pass over all of it at finalize (sherpa-onnx's offline diarization,
/// Falcon's full pass), in bounded memory: up to `memoryLimitBytes` it stays in memory; past that it
/// moves to a temporary file, which is unlinked as soon as it is created, so it disappears when the
/// store is released or the process ends, whatever happens.
///
/// Not thread-safe: one session's queue.
public final class SessionAudioStore {
    /// 64 MiB: 17 minutes of 16 kHz float audio in memory; longer sessions spill to a file.
    public static let defaultMemoryLimitBytes = 64 << 20

    public let memoryLimitBytes: Int
    private let directory: String
    private var memory: [Float] = []
    private var file: Int32 = -1
    public private(set) var sampleCount = 0

    public init(memoryLimitBytes: Int = defaultMemoryLimitBytes, directory: String = NSTemporaryDirectory()) {
        self.memoryLimitBytes = memoryLimitBytes
        self.directory = directory
    }

    deinit {
        if file >= 0 { close(file) }
    }

    /// Whether the audio has moved to the temporary file.
    public var isSpilled: Bool { file >= 0 }

    public func append(_ samples: UnsafeBufferPointer<Float>) throws {
        guard !samples.isEmpty else { return }
        if file < 0, (sampleCount + samples.count) * MemoryLayout<Float>.size > memoryLimitBytes {
            try spill()
        }
        if file >= 0 {
            try write(UnsafeRawBufferPointer(samples))
        } else {
            memory.append(contentsOf: samples)
        }
        sampleCount += samples.count
    }

    /// Calls `body` with every sample so far, contiguous: the memory buffer, or the file mapped
    /// read-only (never read into memory as a whole).
    public func withSamples<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) throws -> R {
        guard file >= 0 else { return try memory.withUnsafeBufferPointer(body) }
        guard sampleCount > 0 else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        let length = sampleCount * MemoryLayout<Float>.size
        guard let mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, file, 0), mapped != MAP_FAILED else {
            throw SessionAudioStoreError("cannot map the session's audio file: \(String(cString: strerror(errno)))")
        }
        defer { munmap(mapped, length) }
        return try body(UnsafeBufferPointer(start: mapped.assumingMemoryBound(to: Float.self), count: sampleCount))
    }

    /// The samples in `range` (clamped), copied out.
    public func samples(in range: Range<Int>) throws -> [Float] {
        let lower = min(sampleCount, max(0, range.lowerBound))
        let clamped = lower ..< max(lower, min(sampleCount, range.upperBound))
        guard !clamped.isEmpty else { return [] }
        return try withSamples { Array($0[clamped]) }
    }

    private func spill() throws {
        var template = Array((directory as NSString).appendingPathComponent("speakersync-audio-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw SessionAudioStoreError("cannot create a temporary file in \(directory): \(String(cString: strerror(errno)))")
        }
        // Unlinked at once: the file lives only as long as this descriptor.
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        file = descriptor
        try memory.withUnsafeBytes { try write($0) }
        memory = []
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(file, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw SessionAudioStoreError("cannot write the session's audio file: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }
}

public struct SessionAudioStoreError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
