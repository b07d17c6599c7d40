import Foundation

/// What `MeetingSet.write` generates: a folder of meetings laid out the way `speakersync eval` reads
/// real corpora (audio files, one RTTM and one UEM for all of them, words per file).
public struct MeetingSetConfig: Sendable {
    public var speakerCount: Int
    public var meetingCount: Int
    public var turnCount: Int
    /// Meeting `i` uses seed `seed + i`, so one meeting can be regenerated alone.
    public var seed: UInt64
    public var synth: SynthConfig
    /// File ids are `<prefix>-<index>`, e.g. `synth3-02`.
    public var namePrefix: String
    /// Short replies said over others' turns, and listeners who say nothing else (nil: none).
    public var backchannels: BackchannelPlan?

    public init(speakerCount: Int, meetingCount: Int = 5, turnCount: Int = 16, seed: UInt64 = 1,
                synth: SynthConfig = MeetingSetConfig.defaultSynth, namePrefix: String? = nil, backchannels: BackchannelPlan? = nil) {
        self.speakerCount = speakerCount
        self.meetingCount = meetingCount
        self.turnCount = turnCount
        self.seed = seed
        self.synth = synth
        self.namePrefix = namePrefix ?? "synth\(speakerCount)"
        self.backchannels = backchannels
    }

    /// Meeting-like timing: some overlapped turn starts and a little background noise.
    public static let defaultSynth = SynthConfig(overlapProbability: 0.1, noise: NoiseConfig(kind: .pink, snrDB: 25))
}

/// Writes a set of synthetic meetings with exact truth:
/// `DIR/<id>.wav` (16 kHz), `DIR/reference.rttm`, `DIR/reference.uem` (each whole file),
/// `DIR/words/<id>.json` (every word with its true start, end and speaker) and `DIR/script/<id>.json`.
public enum MeetingSet {
    @discardableResult
    public static func write(_ config: MeetingSetConfig, to directory: URL,
                             progress: (String, SynthesizedMeeting) -> Void = { _, _ in }) throws -> [String] {
        let synthesizer = MeetingSynthesizer(config: config.synth)
        var rttm = ""
        var uem = ""
        var ids: [String] = []
        do {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("words"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("script"), withIntermediateDirectories: true)
        } catch {
            throw SynthError(.io, "cannot create \(directory.path): \(error.localizedDescription)")
        }
        for index in 0 ..< config.meetingCount {
            let id = String(format: "%@-%02d", config.namePrefix, index)
            let seed = config.seed &+ UInt64(index)
            let script = try MeetingScript.generate(seed: seed, speakerCount: config.speakerCount, turnCount: config.turnCount,
                                                    backchannels: config.backchannels)
            let meeting = try synthesizer.synthesize(script, seed: seed)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            do {
                try meeting.wavData().write(to: directory.appendingPathComponent("\(id).wav"), options: .atomic)
                try meeting.wordsJSON(includeSpeaker: true).write(to: directory.appendingPathComponent("words/\(id).json"), options: .atomic)
                try encoder.encode(script).write(to: directory.appendingPathComponent("script/\(id).json"), options: .atomic)
            } catch {
                throw SynthError(.io, "cannot write \(id) to \(directory.path): \(error.localizedDescription)")
            }
            rttm += meeting.rttm(fileID: id)
            uem += String(format: "%@ 1 0.000 %.3f\n", id, meeting.durationSeconds)
            ids.append(id)
            progress(id, meeting)
        }
        do {
            try Data(rttm.utf8).write(to: directory.appendingPathComponent("reference.rttm"), options: .atomic)
            try Data(uem.utf8).write(to: directory.appendingPathComponent("reference.uem"), options: .atomic)
        } catch {
            throw SynthError(.io, "cannot write the reference files to \(directory.path): \(error.localizedDescription)")
        }
        return ids
    }
}
