import Foundation
import DeterministicRandom
import SpeakerSyncAudio

/// Turns a `MeetingScript` into 16 kHz audio with exact word and turn times.
///
/// Each distinct (voice, word) is spoken in isolation by espeak-ng or Festival (per the voice), trimmed to its voiced span and then
/// placed on the timeline; the truth is therefore where the synthesizer put the samples, not an
/// estimate. Every random choice (gaps, pauses, overlaps, noise) is drawn on the calling thread from
/// generators derived from `seed`, so the same script and seed give byte-identical audio however the
/// synthesiser processes are scheduled.
public struct MeetingSynthesizer: Sendable {
    public let config: SynthConfig
    public static let sampleRate = 16_000

    public init(config: SynthConfig = .default) {
        self.config = config
    }

    /// Synthesises `script`; throws `SynthError` for an invalid script or a synthesiser failure.
    public func synthesize(_ script: MeetingScript, seed: UInt64) throws -> SynthesizedMeeting {
        let voices = Dictionary(script.speakers.map { ($0.id, $0.voice) }, uniquingKeysWith: { first, _ in first })
        guard voices.count == script.speakers.count else {
            throw SynthError(.invalidScript, "duplicate speaker ids")
        }
        for (index, turn) in script.turns.enumerated() {
            guard voices[turn.speaker] != nil else {
                throw SynthError(.invalidScript, "turn \(index) has unknown speaker '\(turn.speaker)'")
            }
            guard !turn.words.isEmpty else { throw SynthError(.invalidScript, "turn \(index) has no words") }
            for word in turn.words where !Self.isSpeakable(word) {
                throw SynthError(.invalidScript, "turn \(index): '\(word)' is not a plain word")
            }
        }

        // 1. Audio for each distinct (voice, word), rendered concurrently, cached for this synthesis.
        var keys: [WordKey] = []
        var seen = Set<WordKey>()
        for turn in script.turns {
            for word in turn.words {
                let key = WordKey(voice: voices[turn.speaker]!, word: word)
                if seen.insert(key).inserted { keys.append(key) }
            }
        }
        let rendered = try WordRenderer(config: config).render(keys)

        // 2. Timeline, in samples.
        let rate = Self.sampleRate
        func samples(_ seconds: Double) -> Int { Int((seconds * Double(rate)).rounded()) }
        var timing = SeededRandom.derived(from: seed, purpose: 2)
        var placements: [(start: Int, audio: [Float])] = []
        var words: [SynthWord] = []
        var turns: [SynthTurn] = []
        var previousStart = samples(config.leadInSeconds)
        var previousEnd = previousStart
        var lastEndBySpeaker: [String: Int] = [:]
        let minimumStep = samples(0.1)
        // Backchannels are placed with a generator of their own, so the regular turns' timing is the
        // same with or without them; they start inside the last regular turn and leave the floor to it.
        var replyTiming = SeededRandom.derived(from: seed, purpose: 4)
        var floor: (start: Int, end: Int)?
        // A word's audio for this turn: the rendered word, resampled when voices drift.
        let upward = TimbreDrift.directions(of: script.speakers.map(\.id), seed: seed)
        let lastIndex = max(1, script.turns.count - 1)
        // One resampler per input rate, its filter designed once for all the words that share it.
        var resamplers: [Int: StreamingResampler] = [:]
        func wordAudio(_ turnIndex: Int, _ speaker: String, _ text: String) throws -> [Float] {
            let audio = rendered[WordKey(voice: voices[speaker]!, word: text)]!
            guard let drift = config.timbreDrift else { return audio }
            let factor = drift.factor(upward: upward[speaker]!, progress: Double(turnIndex) / Double(lastIndex))
            guard let inputRate = TimbreDrift.inputRate(factor: factor, sampleRate: Self.sampleRate) else { return audio }
            if resamplers[inputRate] == nil {
                resamplers[inputRate] = try TimbreDrift.resampler(factor: factor, sampleRate: Self.sampleRate)
            }
            return TimbreDrift.resample(audio, with: &resamplers[inputRate]!)
        }
        for (index, turn) in script.turns.enumerated() {
            if turn.isBackchannel {
                let at = replyTiming.uniform(0.2 ... 0.7)
                let held = floor ?? (previousStart, previousEnd)
                var start = held.start + Int(Double(held.end - held.start) * at)
                if let own = lastEndBySpeaker[turn.speaker] { start = max(start, own + minimumStep) }
                var cursor = start
                for (wordIndex, text) in turn.words.enumerated() {
                    if wordIndex > 0 { cursor += samples(replyTiming.uniform(config.intraTurnGapSeconds)) }
                    let audio = try wordAudio(index, turn.speaker, text)
                    placements.append((cursor, audio))
                    words.append(SynthWord(text: text, startSeconds: Double(cursor) / Double(rate),
                                           endSeconds: Double(cursor + audio.count) / Double(rate), speaker: turn.speaker))
                    cursor += audio.count
                }
                turns.append(SynthTurn(speaker: turn.speaker, startSeconds: Double(start) / Double(rate), endSeconds: Double(cursor) / Double(rate)))
                lastEndBySpeaker[turn.speaker] = cursor
                continue
            }
            // Draw both candidates every time so one turn's choice does not shift later draws.
            let overlapDraw = timing.unit()
            let overlap = timing.uniform(config.overlapSeconds)
            let pauseDraw = timing.uniform(config.interTurnPauseSeconds)
            let pause = turn.pauseBeforeSeconds ?? (overlapDraw < config.overlapProbability ? -overlap : pauseDraw)
            var start = index == 0 ? previousStart : previousEnd + samples(pause)
            // Keep turns in script order and never let a speaker overlap themselves.
            if index > 0 { start = max(start, previousStart + minimumStep) }
            if let own = lastEndBySpeaker[turn.speaker] { start = max(start, own + minimumStep) }
            start = max(start, 0)

            var cursor = start
            for (wordIndex, text) in turn.words.enumerated() {
                let gap = samples(timing.uniform(config.intraTurnGapSeconds))
                if wordIndex > 0 { cursor += gap }
                let audio = try wordAudio(index, turn.speaker, text)
                placements.append((cursor, audio))
                words.append(SynthWord(text: text, startSeconds: Double(cursor) / Double(rate),
                                       endSeconds: Double(cursor + audio.count) / Double(rate),
                                       speaker: turn.speaker))
                cursor += audio.count
            }
            turns.append(SynthTurn(speaker: turn.speaker, startSeconds: Double(start) / Double(rate),
                                   endSeconds: Double(cursor) / Double(rate)))
            lastEndBySpeaker[turn.speaker] = cursor
            floor = (start, cursor)
            previousStart = start
            // Pauses count from when the floor is free: the latest end so far, not just the last turn's.
            previousEnd = max(previousEnd, cursor)
        }

        // 3. Mix by addition (overlapped speech sums), then keep the peak below clipping.
        let speechEnd = placements.map { $0.start + $0.audio.count }.max() ?? 0
        var audio = [Float](repeating: 0, count: speechEnd + samples(config.tailSeconds))
        for placement in placements {
            for (i, sample) in placement.audio.enumerated() { audio[placement.start + i] += sample }
        }
        if let noise = config.noise {
            addNoise(noise, to: &audio, placements: placements, seed: seed)
        }
        let peak = audio.reduce(Float(0)) { max($0, abs($1)) }
        if peak > 0.95 {
            let gain = 0.95 / peak
            for i in audio.indices { audio[i] *= gain }
        }
        return SynthesizedMeeting(audio: audio, sampleRate: rate, words: words, turns: turns, seed: seed)
    }

    /// Adds seeded noise scaled so that speech power / noise power = `snrDB`, speech power being measured
    /// over the samples inside words only.
    func addNoise(_ noise: NoiseConfig, to audio: inout [Float], placements: [(start: Int, audio: [Float])],
                  seed: UInt64) {
        var inSpeech = [Bool](repeating: false, count: audio.count)
        for placement in placements {
            for i in placement.start ..< placement.start + placement.audio.count { inSpeech[i] = true }
        }
        var energy = 0.0
        var count = 0
        for i in audio.indices where inSpeech[i] {
            energy += Double(audio[i]) * Double(audio[i])
            count += 1
        }
        guard count > 0 else { return }
        let noisePower = energy / Double(count) / pow(10, noise.snrDB / 10)
        var rng = SeededRandom.derived(from: seed, purpose: 3)
        let unit = BackgroundNoise.generate(kind: noise.kind, count: audio.count, rng: &rng)
        let scale = Float(noisePower.squareRoot())
        for i in audio.indices { audio[i] += unit[i] * scale }
    }

    /// Letters (any script), digits and inner apostrophes/hyphens only: nothing espeak-ng could read as an
    /// option or as punctuation that changes prosody.
    static func isSpeakable(_ word: String) -> Bool {
        guard let first = word.unicodeScalars.first, CharacterSet.alphanumerics.contains(first) else { return false }
        return word.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || $0 == "'" || $0 == "-"
        }
    }
}
