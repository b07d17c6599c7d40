import Foundation

/// A Swift value that can be bound to a `$n` parameter, in PostgreSQL's text format.
///
/// Values always travel as bind parameters (never spliced into SQL), so quoting here is only
/// about the text representation of the type, not about SQL injection.
public protocol PGEncodable: Sendable {
    /// The value in PostgreSQL text input format.
    var pgText: String { get }
}

/// A bindable parameter value; `nil` in a parameter list binds SQL NULL.
public typealias PGValue = any PGEncodable

/// A value that can be an element of a PostgreSQL array literal (`{...}`), used for
/// `unnest($1::text[], ...)` bulk statements.
public protocol PGArrayElement: Sendable {
    /// Appends this element, quoted as the array input syntax requires.
    func appendPGArrayElement(to literal: inout String)
}

extension String: PGEncodable, PGArrayElement {
    public var pgText: String { self }
    /// Every string element is double-quoted, with `\` and `"` backslash-escaped: this is the
    /// only quoting that is safe for empty strings, `NULL`, braces, commas and whitespace.
    public func appendPGArrayElement(to literal: inout String) {
        // Most elements (words, ids, labels) hold neither: appended whole, not scalar by scalar
        // (the scalar loop was most of a session end's array encoding).
        if !utf8.contains(where: { $0 == 0x5C || $0 == 0x22 }) {
            literal.append("\"")
            literal.append(self)
            literal.append("\"")
            return
        }
        literal.append("\"")
        for scalar in unicodeScalars {
            if scalar == "\\" || scalar == "\"" { literal.append("\\") }
            literal.unicodeScalars.append(scalar)
        }
        literal.append("\"")
    }
}

extension Substring: PGEncodable {
    public var pgText: String { String(self) }
}

extension Int: PGEncodable, PGArrayElement {
    public var pgText: String { String(self) }
    public func appendPGArrayElement(to literal: inout String) { literal.append(String(self)) }
}

extension Int32: PGEncodable, PGArrayElement {
    public var pgText: String { String(self) }
    public func appendPGArrayElement(to literal: inout String) { literal.append(String(self)) }
}

extension Int64: PGEncodable, PGArrayElement {
    public var pgText: String { String(self) }
    public func appendPGArrayElement(to literal: inout String) { literal.append(String(self)) }
}

extension Double: PGEncodable, PGArrayElement {
    /// Swift's shortest round-trip representation, with PostgreSQL's spellings of the specials.
    public var pgText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return description
    }
    public func appendPGArrayElement(to literal: inout String) { literal.append(pgText) }
}

extension Float: PGEncodable, PGArrayElement {
    /// Swift's shortest round-trip representation (what `real` reads back exactly).
    public var pgText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return description
    }
    public func appendPGArrayElement(to literal: inout String) { literal.append(pgText) }
}

extension Bool: PGEncodable, PGArrayElement {
    public var pgText: String { self ? "t" : "f" }
    public func appendPGArrayElement(to literal: inout String) { literal.append(self ? "t" : "f") }
}

extension Date: PGEncodable, PGArrayElement {
    /// ISO 8601 in UTC with microseconds, which `timestamptz` accepts regardless of DateStyle.
    public var pgText: String { PGTimestamp.format(self) }
    public func appendPGArrayElement(to literal: inout String) {
        literal.append("\"")
        literal.append(PGTimestamp.format(self))
        literal.append("\"")
    }
}

extension Optional: PGArrayElement where Wrapped: PGArrayElement {
    /// `nil` becomes an unquoted `NULL` (a quoted "NULL" would be the string).
    public func appendPGArrayElement(to literal: inout String) {
        switch self {
        case .none: literal.append("NULL")
        case .some(let value): value.appendPGArrayElement(to: &literal)
        }
    }
}

extension Array: PGEncodable where Element: PGArrayElement {
    /// A one-dimensional array literal, e.g. `{"a","b",NULL}`; bind it as `$1::text[]`.
    public var pgText: String {
        var literal = "{"
        literal.reserveCapacity(count * 8 + 2)
        var first = true
        for element in self {
            if !first { literal.append(",") }
            first = false
            element.appendPGArrayElement(to: &literal)
        }
        literal.append("}")
        return literal
    }
}
