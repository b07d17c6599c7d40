/// Reads typed fields out of one JSON object and turns every problem into the specific protocol error.
///
/// `null` counts as absent everywhere: `"language": null` means "no language". Unknown fields are
/// ignored so that newer clients can talk to older servers.
struct FieldReader {
    let object: [String: JSONValue]
    /// Names the message in error messages, e.g. "words" or "words.words[3]".
    let context: String
    let config: SessionConfig

    func value(_ name: String) -> JSONValue? {
        switch object[name] {
        case nil, .null?: nil
        case let value?: value
        }
    }

    func optionalString(_ name: String, allowEmpty: Bool = false) throws(ProtocolError) -> String? {
        guard let value = value(name) else { return nil }
        guard case .string(let string) = value else {
            throw .invalid(name, in: context, "must be a string, got \(value.typeName)")
        }
        if !allowEmpty, string.isEmpty {
            throw .invalid(name, in: context, "must not be empty")
        }
        if string.unicodeScalars.count > config.maxStringLength {
            throw .invalid(name, in: context, "is longer than \(config.maxStringLength) characters")
        }
        return string
    }

    func string(_ name: String, allowEmpty: Bool = false) throws(ProtocolError) -> String {
        guard let string = try optionalString(name, allowEmpty: allowEmpty) else {
            throw .missing(name, in: context)
        }
        return string
    }

    func optionalNumber(_ name: String) throws(ProtocolError) -> Double? {
        guard let value = value(name) else { return nil }
        guard case .number(let number) = value else {
            throw .invalid(name, in: context, "must be a number, got \(value.typeName)")
        }
        return number
    }

    func number(_ name: String) throws(ProtocolError) -> Double {
        guard let number = try optionalNumber(name) else { throw .missing(name, in: context) }
        return number
    }

    func bool(_ name: String) throws(ProtocolError) -> Bool {
        guard let value = value(name) else { throw .missing(name, in: context) }
        guard case .bool(let flag) = value else {
            throw .invalid(name, in: context, "must be true or false, got \(value.typeName)")
        }
        return flag
    }

    func array(_ name: String) throws(ProtocolError) -> [JSONValue] {
        guard let value = value(name) else { throw .missing(name, in: context) }
        guard case .array(let elements) = value else {
            throw .invalid(name, in: context, "must be an array, got \(value.typeName)")
        }
        return elements
    }

    /// A confidence in 0…1, or nil when absent.
    func optionalConfidence(_ name: String) throws(ProtocolError) -> Double? {
        guard let confidence = try optionalNumber(name) else { return nil }
        guard (0...1).contains(confidence) else {
            throw .invalid(name, in: context, "must be between 0 and 1, got \(confidence)")
        }
        return confidence
    }

    /// A `start`/`end` pair in seconds on the audio timeline: finite, non-negative, end ≥ start.
    func timeSpan() throws(ProtocolError) -> (startSeconds: Double, endSeconds: Double) {
        let start = try number("start")
        let end = try number("end")
        try Self.checkTimestamp(start, "start", context)
        try Self.checkTimestamp(end, "end", context)
        guard end >= start else {
            throw ProtocolError(.invalidTimestamp, "\(context): end \(end) is before start \(start)")
        }
        return (start, end)
    }

    static func checkTimestamp(_ seconds: Double, _ name: String, _ context: String) throws(ProtocolError) {
        guard seconds.isFinite else {
            throw ProtocolError(.invalidTimestamp, "\(context): \(name) is not a finite number")
        }
        guard seconds >= 0 else {
            throw ProtocolError(.invalidTimestamp, "\(context): \(name) \(seconds) is negative")
        }
    }

    /// Reads each element of `name` as an object, with the element index in error messages.
    func objects<T>(
        _ name: String,
        limit: Int,
        _ read: (FieldReader) throws(ProtocolError) -> T
    ) throws(ProtocolError) -> [T] {
        let elements = try array(name)
        guard elements.count <= limit else {
            throw ProtocolError(
                .tooManyWords, "\(context): \(elements.count) \(name) in one message; the limit is \(limit)")
        }
        var result: [T] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let elementContext = "\(context).\(name)[\(index)]"
            guard case .object(let members) = element else {
                throw .invalid(name, in: context, "must hold objects; element \(index) is \(element.typeName)")
            }
            result.append(try read(FieldReader(object: members, context: elementContext, config: config)))
        }
        return result
    }
}
