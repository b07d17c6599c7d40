import ArgumentParser
import Foundation
import MeetingSynth

struct SynthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synth",
        abstract: "Generate synthetic meetings with exact truth (WAV, RTTM, UEM, words with speakers) for `speakersync eval`.",
        discussion: "Deterministic: the same options give the same files. Voices alternate between espeak-ng and Festival. "
            + "A progress line per meeting goes to stderr (synth: 2/5 NAME (…)); --quiet leaves them out. stdout gets the summary line."
    )

    @Option(help: "Speakers per meeting (2 to 6).")
    var speakers: Int = 2

    @Option(help: "Number of meetings.")
    var count: Int = 5

    @Option(help: "Turns per meeting (each 3 to 12 words).")
    var turns: Int = 16

    @Option(help: "Seed of the first meeting; meeting i uses seed + i.")
    var seed: UInt64 = 1

    @Option(help: "Probability that a turn starts before the previous one ends (overlapped speech).")
    var overlap: Double = 0.1

    @Option(help: "Probability that a turn gets a backchannel (\"yeah\", \"right\": one or two words another speaker says over it without taking the floor).")
    var backchannel: Double = 0

    @Option(help: "Speakers added to each meeting who only backchannel, heard only over others (needs --backchannel; with none, participants backchannel).")
    var listeners: Int = 0

    @Option(help: "Pink background noise at this signal-to-noise ratio in dB; 0 for none.")
    var noiseSNR: Double = 25

    @Option(help: "Each voice drifts across the meeting: its words are resampled by a factor that ramps from 1 - D/2 to 1 + D/2 (direction per speaker from the seed), moving pitch and formants together; 0 for none.")
    var drift: Double = 0

    @Option(help: "Output folder.")
    var output: String

    @Flag(help: "No progress lines on standard error (one per meeting otherwise).")
    var quiet = false

    func validate() throws {
        guard (2 ... 6).contains(speakers) else { throw ValidationError("--speakers must be 2 to 6") }
        guard count >= 1, turns >= 1 else { throw ValidationError("--count and --turns must be at least 1") }
        guard (0 ... 1).contains(overlap) else { throw ValidationError("--overlap is a probability (0 to 1)") }
        guard (0 ... 1).contains(backchannel) else { throw ValidationError("--backchannel is a probability (0 to 1)") }
        guard (0 ... 0.5).contains(drift) else { throw ValidationError("--drift is a total change of the resampling factor, 0 to 0.5") }
        guard listeners >= 0, speakers + listeners <= 6 else { throw ValidationError("--speakers plus --listeners must be at most 6") }
        guard listeners == 0 || backchannel > 0 else { throw ValidationError("--listeners say only backchannels: give --backchannel too") }
    }

    func run() throws {
        var synth = MeetingSetConfig.defaultSynth
        synth.overlapProbability = overlap
        synth.timbreDrift = drift > 0 ? TimbreDrift(spanRatio: drift) : nil
        synth.noise = noiseSNR > 0 ? NoiseConfig(kind: .pink, snrDB: noiseSNR) : nil
        let config = MeetingSetConfig(speakerCount: speakers, meetingCount: count, turnCount: turns, seed: seed, synth: synth,
                                      backchannels: backchannel > 0 ? BackchannelPlan(probability: backchannel, listenerCount: listeners) : nil)
        let directory = URL(fileURLWithPath: output)
        let progress = ProgressReporter(command: "synth", total: count, quiet: quiet)
        do {
            try MeetingSet.write(config, to: directory) { id, meeting in
                progress.finished(id, detail: String(format: "%.1f s audio", meeting.durationSeconds),
                                  result: "\(meeting.words.count) words, \(meeting.turns.count) turns")
            }
        } catch let error as SynthError {
            throw CommandFailure(error.description)
        }
        print("wrote \(count) meetings, reference.rttm, reference.uem and words/ to \(directory.path)")
    }
}
