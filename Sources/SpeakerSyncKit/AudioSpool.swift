import Foundation

/// Where retained audio bytes live: in memory, or in files on disk so a long outage (a phone
/// recording in a lift, a wearable out of range) costs storage rather than memory. Files hold
/// `samplesPerFile` samples each and are deleted once every frame in them is released or dropped, so
/// the disk use is bounded by the retention too.
public final class AudioSpool: @unchecked Sendable { // confined to the owning session's queue
    public struct Location: Sendable, Equatable {
        var file: Int
        var offset: UInt64
        var count: Int
    }

    private let directory: URL
    private let samplesPerFile: Int64
    private var handles: [Int: FileHandle] = [:]
    private var writeFile = -1
    private var writeOffset: UInt64 = 0
    private var liveFrames: [Int: Int] = [:] // frames still held, per file
    private var fileStartSample: Int64 = 0

    /// - Parameter directory: a folder of its own (created; removed again by `removeAll`).
    public init(directory: URL, samplesPerFile: Int64) throws {
        self.directory = directory
        self.samplesPerFile = max(1, samplesPerFile)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { removeAll() }

    func path(_ file: Int) -> URL { directory.appendingPathComponent("audio-\(file).spool") }

    /// Appends a frame's bytes that begins at `startSample`; returns where they are.
    func write(_ bytes: [UInt8], startSample: Int64) throws -> Location {
        if writeFile < 0 || startSample - fileStartSample >= samplesPerFile {
            try handles[writeFile]?.synchronize()
            writeFile += 1
            writeOffset = 0
            fileStartSample = startSample
            // A file that could not be created makes the FileHandle below throw, which says why.
            _ = FileManager.default.createFile(atPath: path(writeFile).path, contents: nil)
            handles[writeFile] = try FileHandle(forUpdating: path(writeFile))
        }
        guard let handle = handles[writeFile] else { throw CocoaError(.fileWriteUnknown) }
        try handle.seek(toOffset: writeOffset)
        try handle.write(contentsOf: bytes)
        let location = Location(file: writeFile, offset: writeOffset, count: bytes.count)
        writeOffset += UInt64(bytes.count)
        liveFrames[writeFile, default: 0] += 1
        return location
    }

    func read(_ location: Location) -> [UInt8] {
        guard let handle = handles[location.file] else { return [] }
        do {
            try handle.seek(toOffset: location.offset)
            return Array(try handle.read(upToCount: location.count) ?? Data())
        } catch {
            return []
        }
    }

    /// A frame at `location` is no longer needed; its file goes when it holds no other.
    func release(_ location: Location) {
        let left = (liveFrames[location.file] ?? 1) - 1
        liveFrames[location.file] = left
        if left <= 0, location.file != writeFile {
            try? handles.removeValue(forKey: location.file)?.close()
            liveFrames[location.file] = nil
            try? FileManager.default.removeItem(at: path(location.file))
        }
    }

    /// Bytes on disk now.
    public var diskBytes: UInt64 {
        handles.keys.reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: path(file).path)[.size] as? UInt64) ?? 0)
        }
    }

    public func removeAll() {
        for handle in handles.values { try? handle.close() }
        handles = [:]
        try? FileManager.default.removeItem(at: directory)
    }
}
