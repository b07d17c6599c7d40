import ArgumentParser
import DiarizationScoring
import Foundation
import Logging
import MeetingSynth
import SpeakerSyncAudio
import SpeechRecognition

/// Server-side ASR (`asr: "server"`) off the server: the `StreamingRecognizer` a session runs, fed the
/// way a device streams (chunks of `--chunk-ms`), against the batch recogniser (`speakersync words`) on
/// the same audio. On synthetic meetings, whose every word is known, it prints the word error rate of
/// both against the truth; on recordings without a word transcript (`--wav`), how many words each
/// found, how far the two agree, and how many streamed words lie inside the reference speech (RTTM).
struct ASRBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asr", abstract: "Streaming (server-side) vs batch PocketSphinx: WER on synthetic meetings, agreement on recordings.")

    @Option(help: "Seed of the first synthetic meeting (meeting i uses seed + i, as `speakersync synth`).") var seed: UInt64 = 101
    @Option(help: "Synthetic meetings; 0 for none.") var count: Int = 5
    @Option(help: "Speakers per meeting.") var speakers: Int = 2
    @Option(help: "Turns per meeting.") var turns: Int = 16
    @Option(help: "Probability of an overlapped turn start (the synth default).") var overlap: Double = 0.1
    @Option(help: "Pink noise SNR in dB (the synth default); 0 for none.") var noiseSNR: Double = 25
    @Option(name: .customLong("chunk-ms"), help: "Audio per process() call, as a device frame.") var chunkMilliseconds: Int = 100
    @Option(name: .customLong("wav"), help: "A recording to run too (repeatable); its RTTM via --rttm in the same order.") var wavs: [String] = []
    @Option(name: .customLong("rttm"), help: "Reference turns of the --wav recordings (one file per --wav, or one for all).") var rttms: [String] = []
    @Flag(help: "Print every meeting's reference and streamed text.") var verbose = false

    func run() throws {
        let logger = Logger(label: "asr-bench")
        let pool = RecognizerPool(maximum: 1, logger: logger)
        try pool.prepare()
        print("PocketSphinx \(pool.config.modelDirectory); streaming: chunks of \(chunkMilliseconds) ms, "
            + "noise floor window \(StreamingRecognizerConfig.default.noiseFloorWindowSeconds) s, closing pause "
            + "\(StreamingRecognizerConfig.default.closingPauseSeconds) s; batch: whole recording")

        if count > 0 {
            var synth = MeetingSetConfig.defaultSynth
            synth.overlapProbability = overlap
            synth.noise = noiseSNR > 0 ? NoiseConfig(kind: .pink, snrDB: noiseSNR) : nil
            let synthesizer = MeetingSynthesizer(config: synth)
            print("\nsynthetic meetings: \(speakers) speakers, \(turns) turns, overlap \(overlap), noise \(noiseSNR > 0 ? "\(noiseSNR) dB" : "none"), seeds \(seed)…\(seed + UInt64(count) - 1)")
            print("seed  audio s  ref words  batch WER (S/D/I)     stream WER (S/D/I)    stream words  stream=batch  stream RTF")
            var totals = (reference: 0, batchErrors: 0, streamErrors: 0, same: 0, audio: 0.0, cpu: 0.0)
            for index in 0 ..< count {
                let meetingSeed = seed + UInt64(index)
                let script = try MeetingScript.generate(seed: meetingSeed, speakerCount: speakers, turnCount: turns)
                let meeting = try synthesizer.synthesize(script, seed: meetingSeed)
                let truth = meeting.words.sorted { $0.startSeconds < $1.startSeconds }
                    .map { ScoredWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, speaker: $0.speaker) }
                let batch = try pool.withRecognizer { try $0.recognize(samples: meeting.audio, sampleRate: meeting.sampleRate) }
                let (streamed, cpu) = try stream(meeting.audio, sampleRate: meeting.sampleRate, pool: pool)
                let batchScore = Self.wer(truth, batch)
                let streamScore = Self.wer(truth, streamed)
                let same = batch.map(\.text) == streamed.map(\.text)
                totals.reference += truth.count
                totals.batchErrors += batchScore.errors
                totals.streamErrors += streamScore.errors
                totals.same += same ? 1 : 0
                totals.audio += meeting.durationSeconds
                totals.cpu += cpu
                print(String(format: "%4d  %7.1f  %9d  %5.3f (%@)  %5.3f (%@)  %12d  %12@  %10.3f",
                             Int(meetingSeed), meeting.durationSeconds, truth.count, batchScore.rate, batchScore.detail,
                             streamScore.rate, streamScore.detail, streamed.count, same ? "yes" : "no", cpu / meeting.durationSeconds))
                if verbose {
                    print("  truth:  \(truth.map(\.text).joined(separator: " "))")
                    print("  stream: \(streamed.map(\.text).joined(separator: " "))")
                }
            }
            print(String(format: "all   %7.1f  %9d  %5.3f                 %5.3f                              %d/%d same   %10.3f",
                         totals.audio, totals.reference, Double(totals.batchErrors) / Double(max(1, totals.reference)),
                         Double(totals.streamErrors) / Double(max(1, totals.reference)), totals.same, count, totals.cpu / totals.audio))
        }

        if !wavs.isEmpty {
            print("\nrecordings (no word transcript: agreement and position only)")
            print("file        audio s  batch words  stream words  stream vs batch WER  stream mid in ref speech  stream RTF")
            for (index, path) in wavs.enumerated() {
                let audio = try WAVFile.read(contentsOf: URL(fileURLWithPath: path))
                let batch = try pool.withRecognizer { try $0.recognize(audio) }
                let (streamed, cpu) = try stream(audio.samples, sampleRate: audio.sampleRate, pool: pool)
                let agreement = Self.wer(batch.map { ScoredWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, speaker: "x") }, streamed)
                var inside = "-"
                let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
                if !rttms.isEmpty {
                    let rttm = rttms[min(index, rttms.count - 1)]
                    let turns = try Self.turns(rttm: rttm, file: name)
                    let count = streamed.filter { word in turns.contains { $0.contains((word.startSeconds + word.endSeconds) / 2) } }.count
                    inside = String(format: "%d/%d (%.0f %%)", count, streamed.count, 100 * Double(count) / Double(max(1, streamed.count)))
                }
                print(String(format: "%-10@  %7.1f  %11d  %12d  %19.3f  %24@  %10.3f", name, audio.durationSeconds, batch.count, streamed.count,
                             agreement.rate, inside, cpu / audio.durationSeconds))
            }
        }
    }

    /// The recogniser a session runs, fed in device-sized chunks; returns its words and the CPU it took.
    private func stream(_ samples: [Float], sampleRate: Int, pool: RecognizerPool) throws -> ([RecognizedWord], Double) {
        let recognizer = try StreamingRecognizer(pool: pool, sampleRate: sampleRate)
        let chunk = max(1, sampleRate * chunkMilliseconds / 1000)
        let started = threadCPUSeconds()
        var words: [RecognizedWord] = []
        var offset = 0
        while offset < samples.count {
            let end = min(samples.count, offset + chunk)
            words += try recognizer.process(Array(samples[offset ..< end])).flatMap(\.words)
            offset = end
        }
        words += try recognizer.finish().flatMap(\.words)
        return (words, threadCPUSeconds() - started)
    }

    /// Word error rate of `hypothesis` against `reference` (Levenshtein over normalised words, as WDER
    /// aligns them): (substituted + deleted + inserted) / reference words.
    static func wer(_ reference: [ScoredWord], _ hypothesis: [RecognizedWord]) -> (rate: Double, errors: Int, detail: String) {
        let result = WordDiarizationErrorRate.score(
            reference: reference,
            hypothesis: hypothesis.map { ScoredWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, speaker: nil) })
        let errors = result.substitutedWordCount + result.deletedWordCount + result.insertedWordCount
        return (Double(errors) / Double(max(1, reference.count)), errors,
                "\(result.substitutedWordCount)/\(result.deletedWordCount)/\(result.insertedWordCount)")
    }

    /// The SPEAKER turns of `file` in an RTTM file.
    static func turns(rttm: String, file: String) throws -> [ClosedRange<Double>] {
        try String(contentsOfFile: rttm, encoding: .utf8).split(whereSeparator: \.isNewline).compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 5, fields[0] == "SPEAKER", fields[1] == file, let start = Double(fields[3]), let duration = Double(fields[4])
            else { return nil }
            return start ... start + duration
        }
    }
}
