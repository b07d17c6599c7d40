import ArgumentParser

@main
struct SpeakerSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speakersync",
        abstract: "Speaker-labelled meeting transcripts: WebSocket ingest, diarization plugins, PostgreSQL.",
        subcommands: [ServeCommand.self, DemoCommand.self, StreamCommand.self, WordsCommand.self, TranscriptCommand.self, ProvidersCommand.self, TokenCommand.self, SynthCommand.self, EvalCommand.self, CompareCommand.self, ProviderWorkerCommand.self]
    )
}
