// UEM, the reader of scored-region maps (`eval`, the benchmarks).
//
// Properties: for every file of a text that parses, what UEM.render writes parses again to as many
// spans at the written millisecond times, and rendering that again gives the same text.
import DiarizationScoring

/// What UEM.render does to a file id: whitespace becomes `_`.
func written(_ name: String) -> String {
    let cleaned = String(name.map { $0.isWhitespace ? "_" : $0 })
    return cleaned.isEmpty ? "_" : cleaned
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let files = try? UEM.parse(text) else { return 0 }
    for (file, spans) in files {
        for span in spans {
            guard span.startSeconds.isFinite, span.endSeconds.isFinite, span.startSeconds >= 0, span.endSeconds >= span.startSeconds else {
                fatalError("accepted a span \(span.startSeconds)…\(span.endSeconds)")
            }
        }
        let rendered = UEM.render(spans, fileID: file)
        let reparsed: [String: [TimeSpan]]
        do {
            reparsed = try UEM.parse(rendered)
        } catch {
            fatalError("rendered UEM does not parse: \(error)\n\(rendered)")
        }
        guard reparsed.count == 1, let again = reparsed[written(file)], again.count == spans.count else {
            fatalError("rendered UEM holds other files or spans: \(reparsed.keys.sorted())\n\(rendered)")
        }
        for (before, after) in zip(spans, again) {
            guard (before.startSeconds * 1000).rounded() == (after.startSeconds * 1000).rounded() else {
                fatalError("start \(before.startSeconds) came back as \(after.startSeconds)")
            }
        }
        guard UEM.render(again, fileID: written(file)) == rendered else {
            fatalError("rendering is not stable:\n\(rendered)\n\(UEM.render(again, fileID: written(file)))")
        }
    }
    return 0
}
