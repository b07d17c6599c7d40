// The device library's types (LiveTranscript, SpeakerSyncSession, …) are part of this module's API:
// the CLI and tests that import SpeakerSyncClient see them without a second import.
@_exported import SpeakerSyncKit
