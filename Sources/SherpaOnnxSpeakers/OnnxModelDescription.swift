import Foundation

/// What an ONNX model file says about itself, read without onnxruntime: its custom metadata (the
/// `metadata_props` sherpa-onnx's loaders read) and its graph's inputs and outputs.
///
/// Why: sherpa-onnx ends the process (`_Exit`, or a C++ exception through its C API) when a model lacks
/// a metadata key it needs, and writes out of bounds when an output is not the shape it assumes. Checking
/// the file first (`SherpaOnnxModelCheck`) turns an operator's wrong file into a message that names it.
///
/// Reads the protobuf wire format directly: ModelProto field 7 (graph: GraphProto, whose fields 11 and
/// 12 are the inputs and outputs) and field 14 (metadata_props: StringStringEntryProto key 1, value 2).
/// Everything else (nodes, weights) is skipped by its length.
public struct OnnxModelDescription: Sendable, Equatable {
    public struct Tensor: Sendable, Equatable {
        public var name: String
        /// TensorProto.DataType: 1 float, 7 int64, …
        public var elementType: Int
        /// Each dimension: a number, or nil for a symbolic one.
        public var dimensions: [Int?]
    }

    public var metadata: [String: String]
    public var inputs: [Tensor]
    public var outputs: [Tensor]

    public static let floatType = 1

    /// Reads `path`; throws `SherpaOnnxSpeakersError` (.invalidModel) for a file that is not an ONNX model.
    public static func read(path: String) throws(SherpaOnnxSpeakersError) -> OnnxModelDescription {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SherpaOnnxSpeakersError(.modelNotFound, "cannot read the model \(path)")
        }
        do {
            return try data.withUnsafeBytes { raw in try parse(raw) }
        } catch let error as ProtobufError {
            throw SherpaOnnxSpeakersError(.invalidModel, "\(path) is not an ONNX model: \(error.message)")
        } catch {
            throw SherpaOnnxSpeakersError(.invalidModel, "\(path): \(error)")
        }
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) throws -> OnnxModelDescription {
        var description = OnnxModelDescription(metadata: [:], inputs: [], outputs: [])
        var reader = ProtobufReader(bytes)
        var sawGraph = false
        while let (field, wire) = try reader.nextKey() {
            switch (field, wire) {
            case (7, 2):
                var graph = ProtobufReader(try reader.lengthDelimited())
                sawGraph = true
                while let (graphField, graphWire) = try graph.nextKey() {
                    switch (graphField, graphWire) {
                    case (11, 2): description.inputs.append(try tensor(graph.lengthDelimited()))
                    case (12, 2): description.outputs.append(try tensor(graph.lengthDelimited()))
                    default: try graph.skip(graphWire)
                    }
                }
            case (14, 2):
                var entry = ProtobufReader(try reader.lengthDelimited())
                var key = "", value = ""
                while let (entryField, entryWire) = try entry.nextKey() {
                    switch (entryField, entryWire) {
                    case (1, 2): key = try entry.string()
                    case (2, 2): value = try entry.string()
                    default: try entry.skip(entryWire)
                    }
                }
                description.metadata[key] = value
            default:
                try reader.skip(wire)
            }
        }
        guard sawGraph else { throw ProtobufError("no graph") }
        return description
    }

    /// ValueInfoProto: name 1, type 2 (TypeProto: tensor_type 1 (elem_type 1, shape 2 (dim 1 (dim_value 1 | dim_param 2)))).
    private static func tensor(_ bytes: UnsafeRawBufferPointer) throws -> Tensor {
        var reader = ProtobufReader(bytes)
        var tensor = Tensor(name: "", elementType: 0, dimensions: [])
        while let (field, wire) = try reader.nextKey() {
            switch (field, wire) {
            case (1, 2):
                tensor.name = try reader.string()
            case (2, 2):
                var type = ProtobufReader(try reader.lengthDelimited())
                while let (typeField, typeWire) = try type.nextKey() {
                    guard typeField == 1, typeWire == 2 else { try type.skip(typeWire); continue }
                    var tensorType = ProtobufReader(try type.lengthDelimited())
                    while let (ttField, ttWire) = try tensorType.nextKey() {
                        switch (ttField, ttWire) {
                        case (1, 0): tensor.elementType = Int(try tensorType.varint())
                        case (2, 2):
                            var shape = ProtobufReader(try tensorType.lengthDelimited())
                            while let (shapeField, shapeWire) = try shape.nextKey() {
                                guard shapeField == 1, shapeWire == 2 else { try shape.skip(shapeWire); continue }
                                var dim = ProtobufReader(try shape.lengthDelimited())
                                var value: Int?
                                while let (dimField, dimWire) = try dim.nextKey() {
                                    if dimField == 1, dimWire == 0 { value = Int(truncatingIfNeeded: try dim.varint()) } else { try dim.skip(dimWire) }
                                }
                                tensor.dimensions.append(value)
                            }
                        default: try tensorType.skip(ttWire)
                        }
                    }
                }
            default:
                try reader.skip(wire)
            }
        }
        return tensor
    }
}

/// A cursor over protobuf wire-format bytes; every read is bounds-checked.
struct ProtobufReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func nextKey() throws -> (field: Int, wire: Int)? {
        guard offset < bytes.count else { return nil }
        let key = try varint()
        return (Int(key >> 3), Int(key & 7))
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw ProtobufError("a varint runs past the end") }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift < 64 else { throw ProtobufError("a varint longer than 10 bytes") }
        }
    }

    mutating func lengthDelimited() throws -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(bytes.count - offset) else { throw ProtobufError("a field of \(length) bytes runs past the end") }
        defer { offset += Int(length) }
        return UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + Int(length)])
    }

    mutating func string() throws -> String {
        String(decoding: try lengthDelimited(), as: UTF8.self)
    }

    mutating func skip(_ wire: Int) throws {
        switch wire {
        case 0: _ = try varint()
        case 1: try advance(8)
        case 2: _ = try lengthDelimited()
        case 5: try advance(4)
        default: throw ProtobufError("wire type \(wire) is not one ONNX uses")
        }
    }

    private mutating func advance(_ count: Int) throws {
        guard bytes.count - offset >= count else { throw ProtobufError("a fixed-width field runs past the end") }
        offset += count
    }
}

struct ProtobufError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
