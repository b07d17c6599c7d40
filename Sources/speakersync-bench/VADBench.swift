import ArgumentParser
import Foundation
import Logging
import SpeakerSyncAudio
import SpeakerSyncClient
import VoiceActivity

/// Silero VAD (onnxruntime or sherpa-onnx, dlopen'd from vendor/) on the shared recordings: speech coverage and false
/// alarm against the reference RTTMs, how late closed segments come out, and the CPU it costs per
/// second of audio (this thread's CPU time around accept/flush/pop, model loading excluded).
struct VADBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vad", abstract: "Silero VAD: coverage and false alarm on sample + ami-dev, segment delay, CPU per audio second.")

    @Option(help: "The shared data folder (sample/, ami-dev/); default $SPEAKERSYNC_TEST_DATA.")
    var data: String?

    @Option(help: "Samples per accept call (1600 = 100 ms, a device frame).")
    var chunk: Int = 1600

    @Option(help: "Override VADConfig.default.threshold.") var threshold: Float?
    @Option(name: .customLong("min-silence"), help: "Override minSilenceDurationSeconds.") var minSilence: Double?
    @Option(name: .customLong("min-speech"), help: "Override minSpeechDurationSeconds.") var minSpeech: Double?
    @Option(help: "Override speechPadSeconds.") var pad: Double?
    @Option(name: .customLong("max-speech"), help: "Override maxSpeechDurationSeconds.") var maxSpeech: Double?
    @Option(help: "Passes over the audio for the CPU figure.") var repeats: Int = 3
    @Option(help: "Who runs the model: onnxruntime (this project's, batchable) or sherpa-onnx.") var engine: String = VADEngine.onnxRuntime.rawValue
    @Flag(help: "Print every file's segments.") var verbose = false

    func run() throws {
        guard let folder = data ?? ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_DATA"] else {
            throw ValidationError("give --data or set SPEAKERSYNC_TEST_DATA to the shared data folder")
        }
        var config = VADConfig.default
        if let threshold { config.threshold = threshold }
        if let minSilence { config.minSilenceDurationSeconds = minSilence }
        if let minSpeech { config.minSpeechDurationSeconds = minSpeech }
        if let pad { config.speechPadSeconds = pad }
        if let maxSpeech { config.maxSpeechDurationSeconds = maxSpeech }
        guard let engine = VADEngine(rawValue: engine) else {
            throw ValidationError("--engine is one of \(VADEngine.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        config.engine = engine
        let logger = Logger(label: "vad-bench")
        let loadStart = threadCPUSeconds()
        let detector = try SileroVoiceActivityDetector(config: config, logger: logger)
        let loadCPU = threadCPUSeconds() - loadStart
        print("silero VAD via \(engine.rawValue) (\(detector.libraryVersion)): threshold \(config.threshold), min silence "
            + "\(config.minSilenceDurationSeconds) s, min speech \(config.minSpeechDurationSeconds) s, max speech "
            + "\(config.maxSpeechDurationSeconds) s, pad \(config.speechPadSeconds) s, chunk \(chunk) samples; "
            + "library + model load \(f(loadCPU * 1000, 1)) ms CPU")

        let amiFolder = (folder as NSString).appendingPathComponent("ami-dev")
        var recordings: [(group: String, name: String, wav: String, rttm: String)] = [
            ("sample", "sample", "\(folder)/sample/sample.wav", "\(folder)/sample/sample.rttm")
        ]
        let amiNames = try FileManager.default.contentsOfDirectory(atPath: amiFolder).filter { $0.hasSuffix(".wav") }.sorted()
        recordings += amiNames.map { ("ami-dev", String($0.dropLast(4)), "\(amiFolder)/\($0)", "\(amiFolder)/reference.rttm") }

        var totals: [String: SpeechCoverage] = [:]
        var audioSeconds = 0.0
        var cpu = 0.0
        var delays: [Double] = []
        var onsetMatches = 0
        var segmentCount = 0
        print("recording  speech s  coverage  false alarm s  segments")
        for recording in recordings {
            let audio = try WAVFile.read(contentsOf: URL(fileURLWithPath: recording.wav))
            guard audio.sampleRate == config.sampleRate else {
                throw ValidationError("\(recording.wav) is \(audio.sampleRate) Hz; the VAD takes \(config.sampleRate)")
            }
            let reference = try DeviceInput.readRTTM(path: recording.rttm, recording: recording.name)
                .map { SpeechSegment(startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
            var segments: [SpeechSegment] = []
            for pass in 0..<max(repeats, 1) {
                detector.reset()
                var found: [SpeechSegment] = []
                var onsets: [Double] = []
                var passDelays: [Double] = []
                let start = threadCPUSeconds()
                audio.samples.withUnsafeBufferPointer { all in
                    var index = 0
                    while index < all.count {
                        let end = min(index + chunk, all.count)
                        let wasActive = detector.isSpeechActive
                        detector.accept(samples: UnsafeBufferPointer(rebasing: all[index..<end]))
                        if !wasActive, let onset = detector.ongoingSpeechStartSeconds { onsets.append(onset) }
                        let closed = detector.popSegments()
                        passDelays += closed.map { Double(end) / Double(config.sampleRate) - $0.endSeconds }
                        found += closed
                        index = end
                    }
                    detector.flush()
                    found += detector.popSegments()
                }
                cpu += threadCPUSeconds() - start
                audioSeconds += audio.durationSeconds
                if pass == 0 {
                    segments = found
                    delays += passDelays
                    segmentCount += found.count
                    onsetMatches += found.filter { segment in onsets.contains { abs($0 - segment.startSeconds) < 1e-9 } }.count
                }
            }
            let coverage = SpeechCoverage(reference: reference, detected: segments)
            totals[recording.group, default: SpeechCoverage()] = totals[recording.group, default: SpeechCoverage()] + coverage
            print("\(recording.name.padding(toLength: 9, withPad: " ", startingAt: 0))  \(f(coverage.referenceSeconds, 2))  "
                + "\(f(coverage.coverage * 100, 1)) %  \(f(coverage.falseAlarmSeconds, 2))  \(segments.count)")
            if verbose {
                print("  " + segments.map { "\(f($0.startSeconds, 2))–\(f($0.endSeconds, 2))" }.joined(separator: " "))
            }
        }
        for group in ["sample", "ami-dev"] {
            guard let total = totals[group] else { continue }
            let files = group == "sample" ? 1 : amiNames.count
            let audio = Double(files) * 30
            print("\(group): coverage \(f(total.coverage * 100, 1)) % of \(f(total.referenceSeconds, 1)) s reference speech; "
                + "false alarm \(f(total.falseAlarmSeconds, 2)) s = \(f(total.falseAlarmSeconds / audio * 100, 1)) % of the audio, "
                + "\(f(total.falseAlarmSeconds / max(audio - total.referenceSeconds, 1e-9) * 100, 1)) % of the non-speech")
        }
        let sortedDelays = delays.sorted()
        if !sortedDelays.isEmpty {
            print("closed-segment delay (audio received past the segment's end when popSegments returned it, flush excluded): "
                + "median \(f(sortedDelays[sortedDelays.count / 2], 2)) s, max \(f(sortedDelays.last!, 2)) s over \(sortedDelays.count) segments")
        }
        print("ongoing-speech start (ongoingSpeechStartSeconds at onset) equal to the closed segment's start: \(onsetMatches) of \(segmentCount) segments")
        print("CPU: \(f(cpu, 3)) s for \(f(audioSeconds, 1)) s of audio = \(f(cpu / audioSeconds, 5)) s CPU per audio second "
            + "(\(f(audioSeconds / cpu, 0))x real time on one core)")
    }

    private func f(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }
}
