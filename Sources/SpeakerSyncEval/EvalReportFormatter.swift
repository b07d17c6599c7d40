import DiarizationScoring
import Foundation
import Statistics

/// Renders an `EvalSummary` as an aligned text table (one row per file plus the total) or as JSON.
public enum EvalReportFormatter {
    static let columns = ["file", "DER", "DER.25", "live.25", "JER", "WDER", "WDER-ov", "ov-ok", "unlab", "spk", "kept", "1st p50/p95/p99 s", "fin p95", "chunk p50/p99 ms", "RTF", "MB/sess"]

    public static func table(_ summary: EvalSummary) -> String {
        var rows = summary.files.map { file in
            row(id: file.id, der: file.finalDER, derCollar: file.finalDERCollar, live: file.liveDERCollar, jer: file.jer,
                wder: rate(file.wder), wderClean: rate(file.wderOutsideOverlap),
                overlapOK: file.overlapWordCount == 0 ? nil : Double(file.overlapWordsWithATalkingSpeaker) / Double(file.overlapWordCount),
                unlabelled: file.wordCount == 0 ? 0 : Double(file.unlabelledWordCount) / Double(file.wordCount),
                speakers: "\(file.speakers.hypothesisCount)/\(file.speakers.referenceCount)", kept: file.numbersKept,
                first: Percentiles(file.firstLabelLatenciesSeconds), final: Percentiles(file.finalLabelLatenciesSeconds),
                chunks: Percentiles(file.chunkProcessingSeconds), rtf: file.realTimeFactor, memory: file.memoryPerSessionBytes)
        }
        rows.append(row(
            id: "ALL (\(summary.files.count))", der: summary.finalDER, derCollar: summary.finalDERCollar, live: summary.liveDERCollar,
            jer: summary.jer, wder: summary.wderRate, wderClean: summary.wderOutsideOverlapRate,
            overlapOK: summary.overlapWordCount == 0 ? nil : Double(summary.overlapWordsWithATalkingSpeaker) / Double(summary.overlapWordCount),
            unlabelled: summary.wordCount == 0 ? 0 : Double(summary.unlabelledWordCount) / Double(summary.wordCount),
            speakers: "\(summary.exactSpeakerCountFiles)/\(summary.files.count) ok", kept: summary.numbersKept,
            first: summary.firstLabelLatency, final: summary.finalLabelLatency, chunks: summary.chunkProcessing,
            rtf: summary.realTimeFactor, memory: summary.maxMemoryPerSessionBytes))
        let all = [columns] + rows
        let widths = columns.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == 0 ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[index] - cell.count) + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    static func rate(_ result: WDERResult) -> Double {
        result.alignedWordCount == 0 ? 0 : Double(result.mislabelledWordCount) / Double(result.alignedWordCount)
    }

    static func row(id: String, der: DERComponents, derCollar: DERComponents, live: DERComponents, jer: Double,
                    wder: Double, wderClean: Double, overlapOK: Double?, unlabelled: Double, speakers: String, kept: SpeakerNumberKeeping,
                    first: Percentiles, final: Percentiles, chunks: Percentiles, rtf: Double?, memory: Int?) -> [String] {
        func percent(_ value: Double?) -> String { value.map { String(format: "%.1f%%", $0 * 100) } ?? "-" }
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "-" }
        func millis(_ value: Double?) -> String { value.map { String(format: "%.1f", $0 * 1000) } ?? "-" }
        return [
            id, percent(der.errorRate), percent(derCollar.errorRate), percent(live.errorRate), percent(jer),
            percent(wder), percent(wderClean), percent(overlapOK), percent(unlabelled), speakers,
            "\(kept.keptCount)/\(kept.introducedCount)",
            "\(seconds(first.p50))/\(seconds(first.p95))/\(seconds(first.p99))", seconds(final.p95),
            "\(millis(chunks.p50))/\(millis(chunks.p99))", rtf.map { String(format: "%.4f", $0) } ?? "-",
            memory.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "-",
        ]
    }

    /// Machine-readable report: per file and overall, every figure of the table with full precision.
    public static func json(_ summary: EvalSummary) -> String {
        func der(_ value: DERComponents) -> [String: Any] {
            ["error_rate": value.errorRate, "reference_seconds": value.referenceSeconds, "missed_seconds": value.missedSeconds,
             "false_alarm_seconds": value.falseAlarmSeconds, "confusion_seconds": value.confusionSeconds]
        }
        func percentiles(_ value: Percentiles) -> [String: Any] {
            ["count": value.count, "p50": value.p50 ?? NSNull(), "p95": value.p95 ?? NSNull(), "p99": value.p99 ?? NSNull(), "max": value.max ?? NSNull()]
        }
        let files: [[String: Any]] = summary.files.map { file in
            [
                "id": file.id, "audio_seconds": file.audioSeconds,
                "der_collar_0": der(file.finalDER), "der_collar_0_25": der(file.finalDERCollar),
                "live_der_collar_0_25": der(file.liveDERCollar), "jer": file.jer,
                "wder": rate(file.wder), "wder_outside_overlap": rate(file.wderOutsideOverlap),
                "aligned_words": file.wder.alignedWordCount,
                "overlap_words": file.overlapWordCount, "overlap_words_with_a_talking_speaker": file.overlapWordsWithATalkingSpeaker,
                "words": file.wordCount, "unlabelled_words": file.unlabelledWordCount,
                "speakers_found": file.speakers.hypothesisCount, "speakers_reference": file.speakers.referenceCount,
                "speakers_introduced_live": file.numbersKept.introducedCount, "speakers_kept_number": file.numbersKept.keptCount,
                "first_label_latency_seconds": percentiles(Percentiles(file.firstLabelLatenciesSeconds)),
                "final_label_latency_seconds": percentiles(Percentiles(file.finalLabelLatenciesSeconds)),
                "chunk_processing_seconds": percentiles(Percentiles(file.chunkProcessingSeconds)),
                "real_time_factor": file.realTimeFactor ?? NSNull(),
                "memory_per_session_bytes": file.memoryPerSessionBytes ?? NSNull(),
                "errors": file.errors,
            ]
        }
        let overall: [String: Any] = [
            "files": summary.files.count, "audio_seconds": summary.audioSeconds,
            "der_collar_0": der(summary.finalDER), "der_collar_0_25": der(summary.finalDERCollar),
            "live_der_collar_0_25": der(summary.liveDERCollar), "jer": summary.jer,
            "wder": summary.wderRate, "wder_outside_overlap": summary.wderOutsideOverlapRate,
            "overlap_words": summary.overlapWordCount, "overlap_words_with_a_talking_speaker": summary.overlapWordsWithATalkingSpeaker,
            "words": summary.wordCount, "unlabelled_words": summary.unlabelledWordCount,
            "files_with_exact_speaker_count": summary.exactSpeakerCountFiles,
            "speakers_introduced_live": summary.numbersKept.introducedCount, "speakers_kept_number": summary.numbersKept.keptCount,
            "first_label_latency_seconds": percentiles(summary.firstLabelLatency),
            "final_label_latency_seconds": percentiles(summary.finalLabelLatency),
            "chunk_processing_seconds": percentiles(summary.chunkProcessing),
            "real_time_factor": summary.realTimeFactor ?? NSNull(),
            "max_memory_per_session_bytes": summary.maxMemoryPerSessionBytes ?? NSNull(),
        ]
        let root: [String: Any] = ["provider": summary.provider, "overall": overall, "files": files]
        let data = (try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
