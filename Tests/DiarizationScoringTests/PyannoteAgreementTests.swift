import DiarizationScoring
import Foundation
import Testing
import TestSupport
import DeterministicRandom

/// DER, JER and speaker-count error agree with pyannote.metrics on the shared AMI and sample references
/// and on seeded perturbations of them, at collar 0 and 0.25 s, with overlap scored and skipped.
@Suite struct PyannoteAgreementTests {
    struct File {
        var id: String
        var reference: [SpeakerSegment]
        var uem: [TimeSpan]?
    }

    static let rateTolerance = 0.001       // 0.1 percentage point
    static let secondsTolerance = 0.001    // 1 ms

    @Test func derAndJERAgreeWithPyannoteMetrics() throws {
        let scorer = try PyannoteScorer()
        let files = try Self.referenceFiles()
        #expect(files.count == 12)

        var cases: [PyannoteScorer.Case] = []
        var ours: [(label: String, der: DERComponents, jer: JERResult, count: SpeakerCountError)] = []
        for (fileIndex, file) in files.enumerated() {
            // The references and every hypothesis go through RTTM text, so both scorers read the same numbers.
            let referenceText = RTTM.render(file.reference, fileID: file.id)
            let reference = try RTTM.parse(referenceText)[file.id] ?? []
            let uemText = file.uem.map { UEM.render($0, fileID: file.id) }
            let uem = try uemText.map { try UEM.parse($0)[file.id] ?? [] }
            let durationSeconds = file.uem?.map(\.endSeconds).max() ?? (reference.map(\.endSeconds).max() ?? 30)
            for (kindIndex, kind) in HypothesisPerturbation.allCases.enumerated() {
                var random = SeededRandom(seed: 0x5C0_2E00 &+ UInt64(fileIndex * 100 + kindIndex))
                let perturbed = kind.apply(to: reference, durationSeconds: durationSeconds, random: &random)
                let hypothesisText = RTTM.render(perturbed, fileID: file.id)
                let hypothesis = try RTTM.parse(hypothesisText)[file.id] ?? []
                for collar in [0.0, 0.25] {
                    for skipOverlap in [false, true] {
                        let config = DERConfig(collarSeconds: collar, skipOverlap: skipOverlap)
                        cases.append(PyannoteScorer.Case(
                            uri: file.id, reference: referenceText, hypothesis: hypothesisText, uem: uemText,
                            collar: collar, skip_overlap: skipOverlap))
                        ours.append((
                            "\(file.id)/\(kind.rawValue) collar \(collar) skip_overlap \(skipOverlap)",
                            DiarizationErrorRate.score(reference: reference, hypothesis: hypothesis, uem: uem, config: config),
                            JaccardErrorRate.score(reference: reference, hypothesis: hypothesis, uem: uem, config: config),
                            SpeakerCountError(reference: reference, hypothesis: hypothesis, uem: uem)))
                    }
                }
            }
        }

        let (version, theirs) = try scorer.score(cases)
        var maxRate = 0.0, maxJER = 0.0, maxSeconds = 0.0
        for (mine, reference) in zip(ours, theirs) {
            let der = mine.der
            let rateDelta = abs(der.errorRate - reference.der)
            let jerDelta = abs(mine.jer.errorRate - reference.jer)
            let secondsDelta = [
                abs(der.referenceSeconds - reference.total), abs(der.missedSeconds - reference.missed),
                abs(der.falseAlarmSeconds - reference.false_alarm), abs(der.confusionSeconds - reference.confusion),
                abs(der.correctSeconds - reference.correct),
            ].max()!
            maxRate = max(maxRate, rateDelta)
            maxJER = max(maxJER, jerDelta)
            maxSeconds = max(maxSeconds, secondsDelta)
            #expect(rateDelta <= Self.rateTolerance, "\(mine.label): DER \(der.errorRate) vs pyannote \(reference.der)")
            #expect(jerDelta <= Self.rateTolerance, "\(mine.label): JER \(mine.jer.errorRate) vs pyannote \(reference.jer)")
            #expect(secondsDelta <= Self.secondsTolerance, "\(mine.label): \(der) vs pyannote \(reference)")
            #expect(Double(abs(mine.count.difference)) == reference.speaker_count_error,
                    "\(mine.label): speaker count error \(mine.count.difference) vs pyannote \(reference.speaker_count_error)")
        }
        let rates = theirs.map(\.der)
        print(String(
            format: "pyannote.metrics %@ agreement over %d cases (pyannote DER %.1f–%.1f %%): "
                + "max |ΔDER| = %.2e pp, max |ΔJER| = %.2e pp, max |Δseconds| = %.2e s",
            version, cases.count, (rates.min() ?? 0) * 100, (rates.max() ?? 0) * 100, maxRate * 100, maxJER * 100, maxSeconds))
    }

    /// ami-dev (11 files with their UEM) and sample (no UEM: scored over the span of both annotations).
    static func referenceFiles() throws -> [File] {
        let rttm = try #require(TestData.file("ami-dev/reference.rttm"), "shared data missing: set SPEAKERSYNC_TEST_DATA")
        let uemURL = try #require(TestData.file("ami-dev/reference.uem"))
        let sampleURL = try #require(TestData.file("sample/sample.rttm"))
        let ami = try RTTM.parse(String(contentsOf: rttm, encoding: .utf8))
        let uem = try UEM.parse(String(contentsOf: uemURL, encoding: .utf8))
        let sample = try RTTM.parse(String(contentsOf: sampleURL, encoding: .utf8))
        var files = ami.keys.sorted().map { File(id: $0, reference: ami[$0]!, uem: uem[$0]) }
        files += sample.keys.sorted().map { File(id: $0, reference: sample[$0]!, uem: nil) }
        return files
    }
}
