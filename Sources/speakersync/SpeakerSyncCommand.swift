import ArgumentParser
import SessionProtocol
import SpeakerSyncServer

@main
struct SpeakerSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speakersync",
        abstract: "Speaker-labelled meeting transcripts: WebSocket ingest, diarization plugins, PostgreSQL.",
        // `speakersync --version`: what a bug report needs to name the build and what it speaks.
        version: "speakersync \(SpeakerSyncApplication.version) (session protocol \(SessionInfo.protocolVersion))",
        subcommands: [ServeCommand.self, DemoCommand.self, StreamCommand.self, WordsCommand.self, TranscriptCommand.self, ConversationsCommand.self, ProvidersCommand.self, HealthCommand.self, TokenCommand.self, SynthCommand.self, EvalCommand.self, CompareCommand.self, ProviderWorkerCommand.self]
    )
}
