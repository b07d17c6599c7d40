// RTTM, the reader of diarization references (uploaded to the comparison API, read by `eval`).
//
// Properties: for every file of a text that parses, what RTTM.render writes parses again to as
// many turns, of the same speakers (whitespace inside a name written as `_`, as documented), at
// the written millisecond times; and rendering that again gives the same text.
import DiarizationScoring

/// What RTTM.render documents it does to a name: whitespace becomes `_`.
func written(_ name: String) -> String {
    let cleaned = String(name.map { $0.isWhitespace ? "_" : $0 })
    return cleaned.isEmpty ? "_" : cleaned
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let files = try? RTTM.parse(text) else { return 0 }
    for (file, segments) in files {
        for segment in segments {
            guard segment.startSeconds.isFinite, segment.startSeconds >= 0, segment.endSeconds >= segment.startSeconds else {
                fatalError("accepted a turn \(segment.startSeconds)…\(segment.endSeconds)")
            }
        }
        let rendered = RTTM.render(segments, fileID: file)
        let reparsed: [String: [SpeakerSegment]]
        do {
            reparsed = try RTTM.parse(rendered)
        } catch {
            fatalError("rendered RTTM does not parse: \(error)\n\(rendered)")
        }
        guard reparsed.count == 1, let again = reparsed[written(file)], again.count == segments.count else {
            fatalError("rendered RTTM holds other files or turns: \(reparsed.keys.sorted())\n\(rendered)")
        }
        for (before, after) in zip(segments, again) {
            guard after.speaker == written(before.speaker) else { fatalError("speaker \(before.speaker) came back as \(after.speaker)") }
            guard (before.startSeconds * 1000).rounded() == (after.startSeconds * 1000).rounded() else {
                fatalError("start \(before.startSeconds) came back as \(after.startSeconds)")
            }
        }
        guard RTTM.render(again, fileID: written(file)) == rendered else {
            fatalError("rendering is not stable:\n\(rendered)\n\(RTTM.render(again, fileID: written(file)))")
        }
    }
    return 0
}
