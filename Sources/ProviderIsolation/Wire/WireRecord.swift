import ProviderInterface

/// A record on the worker wire defined once, as a table of its fields in order: the writer, the reader
/// and the smallest encoded size (which bounds a declared count against the bytes left) all come from
/// that one table, so they cannot disagree (a hand-written comment once said 32 bytes for a 33-byte turn).
struct WireRecord<Record: Sendable>: Sendable {
    /// One field: its smallest encoded size, how it is written, and how it is read into a record.
    struct Field: Sendable {
        let minimumBytes: Int
        let write: @Sendable (Record, inout WireWriter) -> Void
        let read: @Sendable (inout Record, inout WireReader) throws(WireError) -> Void
    }

    /// What a read starts from before every field is read into it.
    let blank: Record
    let fields: [Field]

    /// The smallest encoded record: the sum of its fields'.
    var minimumBytes: Int { fields.reduce(0) { $0 + $1.minimumBytes } }

    func write(_ record: Record, _ writer: inout WireWriter) {
        for field in fields { field.write(record, &writer) }
    }

    func read(_ reader: inout WireReader) throws(WireError) -> Record {
        var record = blank
        for field in fields { try field.read(&record, &reader) }
        return record
    }

    /// A count, then each record.
    func writeList(_ records: [Record], _ writer: inout WireWriter) {
        writer.u32(UInt32(records.count))
        for record in records { write(record, &writer) }
    }

    /// A count checked against the bytes left (`what` names it in errors), then each record.
    func readList(_ reader: inout WireReader, _ what: String) throws(WireError) -> [Record] {
        let count = try reader.count(minimumElementSize: minimumBytes, what)
        var records: [Record] = []
        records.reserveCapacity(count)
        for _ in 0 ..< count { records.append(try read(&reader)) }
        return records
    }
}

extension WireRecord.Field {
    static func u64(_ path: WritableKeyPath<Record, UInt64> & Sendable) -> Self {
        Self(minimumBytes: 8, write: { $1.u64($0[keyPath: path]) }, read: { (record, reader) throws(WireError) in record[keyPath: path] = try reader.u64() })
    }

    static func i32(_ path: WritableKeyPath<Record, Int32> & Sendable) -> Self {
        Self(minimumBytes: 4, write: { $1.i32($0[keyPath: path]) }, read: { (record, reader) throws(WireError) in record[keyPath: path] = try reader.i32() })
    }

    static func f64(_ path: WritableKeyPath<Record, Double> & Sendable) -> Self {
        Self(minimumBytes: 8, write: { $1.f64($0[keyPath: path]) }, read: { (record, reader) throws(WireError) in record[keyPath: path] = try reader.f64() })
    }

    /// A Double sent as a Float (confidences: 4 bytes are plenty).
    static func f32(_ path: WritableKeyPath<Record, Double> & Sendable) -> Self {
        Self(minimumBytes: 4, write: { $1.f32(Float($0[keyPath: path])) },
             read: { (record, reader) throws(WireError) in record[keyPath: path] = Double(try reader.f32()) })
    }

    static func bool(_ path: WritableKeyPath<Record, Bool> & Sendable) -> Self {
        Self(minimumBytes: 1, write: { $1.bool($0[keyPath: path]) }, read: { (record, reader) throws(WireError) in record[keyPath: path] = try reader.bool() })
    }

    static func string(_ path: WritableKeyPath<Record, String> & Sendable) -> Self {
        Self(minimumBytes: 4, write: { $1.string($0[keyPath: path]) }, read: { (record, reader) throws(WireError) in record[keyPath: path] = try reader.string() })
    }

    static func optionalString(_ path: WritableKeyPath<Record, String?> & Sendable) -> Self {
        Self(minimumBytes: 1, write: { $1.optionalString($0[keyPath: path]) },
             read: { (record, reader) throws(WireError) in record[keyPath: path] = try reader.optionalString() })
    }
}

/// The records of the worker wire.
enum WireRecords {
    /// A provider turn: 33 bytes.
    static let turn = WireRecord<ProviderTurn>(
        blank: ProviderTurn(turnID: 0, speaker: 0, startSeconds: 0, endSeconds: 0, confidence: 0, isRemoved: false),
        fields: [.u64(\.turnID), .i32(\.speaker), .f64(\.startSeconds), .f64(\.endSeconds), .f32(\.confidence), .bool(\.isRemoved)])

    /// A provider of a worker's manifest: its descriptor (the plugin path as its kind) and whether it
    /// embeds voices.
    static let provider = WireRecord<WorkerProvider>(
        blank: WorkerProvider(descriptor: ProviderDescriptor(id: "", name: "", version: "", description: "", latencyClass: .realtime,
                                                             licence: "", kind: .plugin(path: "")),
                              supportsVoiceEmbedding: false),
        fields: [
            .string(\.descriptor.id), .string(\.descriptor.name), .string(\.descriptor.version), .string(\.descriptor.description),
            .init(minimumBytes: 4, write: { $1.string($0.descriptor.latencyClass.rawValue) }, read: { (provider, reader) throws(WireError) in
                let text = try reader.string()
                guard let latency = LatencyClass(rawValue: text) else { throw WireError("unknown latency class '\(text)'") }
                provider.descriptor.latencyClass = latency
            }),
            .string(\.descriptor.licence),
            .init(minimumBytes: 4, write: { provider, writer in
                if case .plugin(let path) = provider.descriptor.kind { writer.string(path) } else { writer.string("") }
            }, read: { (provider, reader) throws(WireError) in provider.descriptor.kind = .plugin(path: try reader.string()) }),
            .string(\.descriptor.requirements), .string(\.descriptor.measured), .optionalString(\.descriptor.unavailableReason),
            .bool(\.supportsVoiceEmbedding),
        ])

    /// A plugin file that failed to load, or a provider of it that was refused.
    static let loadFailure = WireRecord<PluginLoadFailure>(
        blank: PluginLoadFailure(path: "", code: .workerFailed, message: ""),
        fields: [
            .string(\.path),
            .init(minimumBytes: 4, write: { $1.string($0.code.rawValue) }, read: { (failure, reader) throws(WireError) in
                let text = try reader.string()
                guard let code = PluginLoadFailure.Code(rawValue: text) else { throw WireError("unknown load failure code '\(text)'") }
                failure.code = code
            }),
            .string(\.message), .optionalString(\.providerID),
        ])
}
