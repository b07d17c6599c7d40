// JSONParser, the parser of every client text message and of the `options` query parameter.
//
// Properties: a value that parses, written by JSONTextWriter (canonical: sorted keys, shortest
// numbers), parses again to an equal value and writes the same text again; the lenient
// (`.replace`) policy accepts every input the strict one accepts, with the same value, and never
// fails with `invalidText` (the decoder relies on it to learn a refused message's type).
import SessionProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lenient: JSONValue?
    do {
        lenient = try JSONParser(invalidText: .replace).parse(bytes: bytes)
    } catch {
        guard error.kind == .syntax else { fatalError("the replace policy failed with \(error)") }
        lenient = nil
    }
    let value: JSONValue
    do {
        value = try JSONParser().parse(bytes: bytes)
    } catch {
        if error.kind == .syntax, lenient != nil { fatalError("strict syntax error \(error) where lenient parsing succeeded") }
        return 0
    }
    guard lenient == value else { fatalError("lenient parse \(String(describing: lenient)) != strict \(value)") }

    var writer = JSONTextWriter()
    writer.value(value)
    let again: JSONValue
    do {
        again = try JSONParser().parse(writer.text)
    } catch {
        fatalError("written text \(writer.text) does not parse: \(error)")
    }
    guard again == value else { fatalError("round trip changed \(value) into \(again)") }
    var second = JSONTextWriter()
    second.value(again)
    guard second.text == writer.text else { fatalError("writing is not canonical: \(writer.text) then \(second.text)") }
    return 0
}
