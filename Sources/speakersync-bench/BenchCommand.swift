import ArgumentParser
import Foundation

/// Benchmarks print figures; they assert nothing. Run them from a release build:
///   swift build -c release && .build/release/speakersync-bench <name>
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speakersync-bench",
        abstract: "SpeakerSync benchmarks (figures, not tests).",
        subcommands: [MergeBench.self, PersistBench.self, SessionsBench.self, VADBench.self, DiarizeBench.self, BatchBench.self, OverlapBench.self, IsolationBench.self, CalibrateBench.self, AuthBench.self, ASRBench.self, FaultsBench.self, FleetBench.self, SlowClientsBench.self, EncodeBench.self]
    )
}

struct MergeBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "merge", abstract: "Transcript merge: W words against T turns, one batch and in 100 ms increments.")

    @Option var words = 1_000_000
    @Option var turns = 100_000
    @Option(name: .customLong("increment")) var incrementSeconds = 0.1
    @Option(name: .customLong("simultaneous"),
            help: "Fraction of words that get a second speaker's word over their second half (words said at once).")
    var simultaneousFraction = 0.0

    func run() {
        print(runMergeBenchmark(words: words, turns: turns, incrementSeconds: incrementSeconds,
                                simultaneousFraction: simultaneousFraction))
    }
}
