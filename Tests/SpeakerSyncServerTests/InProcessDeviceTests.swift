import DiarizationScoring
import Foundation
import Logging
import PluginHost
import SessionProtocol
import SpeakerSyncAudio
import Testing
@testable import SpeakerSyncServer

/// The console's test recordings' device: a real session of `SessionManager` (state machine, provider,
/// merge, store), driven in process through a `LoopbackSessionTransport`, with an in-memory store.
@Suite struct InProcessDeviceTests {
    let store = InMemorySessionStore()
    let plugins = PluginRegistry(directory: ResourceLocator.pluginsDirectory(nil), logger: Logger(label: "test"))
    static let logger: Logger = {
        var logger = Logger(label: "in-process-device-test")
        logger.logLevel = .warning
        return logger
    }()

    func sessions(access: AccessGate = AccessGate(config: AccessConfig(mode: .off), book: CredentialBook())) -> SessionManager {
        var config = SessionConfig.default
        config.knownProviders = Set(plugins.providers.map(\.id))
        // The device paces itself on the test process's cooperative threads, which the suites running
        // beside it can hold for a long time on a loaded machine; these tests are not about idling.
        config.idleIntervalSeconds = 300
        let manager = SessionManager()
        manager.bind(SessionEnvironment(
            transport: RecordingTransport(), store: store, providers: plugins, claims: ConversationClaims(), merge: .default,
            protocolConfig: config, serverVersion: "test", logger: Self.logger, access: access))
        return manager
    }

    func device(_ sessions: SessionManager, as principal: Principal) -> InProcessDevice {
        InProcessDevice(config: InProcessDeviceConfig(speed: 8), sessions: sessions, principal: principal, address: "127.0.0.1", logger: Self.logger)
    }

    func start(_ meeting: TestMeeting, conversationID: String, deviceID: String, provider: String = "device") -> StartRequest {
        StartRequest(conversationID: conversationID, deviceID: deviceID, provider: provider, sampleRate: meeting.audio.sampleRate, encoding: .pcmS16LE)
    }

    /// A second of silence without words: enough for a session to start.
    static let silence = TestMeeting(id: "silence", audio: AudioBuffer(samples: [Float](repeating: 0, count: 16_000), sampleRate: 16_000),
                                     words: [], reference: [], uem: [], referenceWords: [])

    @Test func aSynthesisedMeetingStreamsThroughARealSessionAndComesBackLabelledAndStored() async throws {
        let request = TestRecordingRequest(providers: ["device"], speakerCount: 2, turnCount: 3, seed: 21, speed: 8, deviceID: "phone-a")
        let meeting = try TestMeeting.synthesise(request, recordingID: "t1")
        #expect(meeting.id == "test-t1-00" && meeting.words.count == meeting.referenceWords.count && !meeting.words.isEmpty)
        #expect(Set(meeting.reference.map(\.speaker)).count == 2)
        let sessions = sessions()
        // Provider `device` with the true turns: what comes back is the merge of the truth.
        let truth = meeting.reference.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let run = try await device(sessions, as: .device(deviceID: "phone-a", tokenID: "t"))
            .stream(meeting, start: start(meeting, conversationID: "test-t1-device", deviceID: "phone-a"), segments: truth)

        #expect(run.conversationID == "test-t1-device")
        #expect(run.words.count == meeting.words.count)
        #expect(run.words.allSatisfy { $0.speaker != nil && $0.isStored && $0.isFinal })
        #expect(abs(run.stats.audioSeconds - meeting.audioSeconds) < 0.01)
        #expect(run.stats.wordCount == meeting.words.count && run.stats.speakerCount == 2)
        let score = SessionScore(
            reference: meeting.reference, uem: meeting.uem, referenceWords: meeting.referenceWords,
            hypothesisWords: run.words.map { ScoredWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, speaker: $0.speaker) },
            liveTurns: run.stats.liveTurns.map(TestRecordingReport.segment), finalTurns: run.stats.finalTurns.map(TestRecordingReport.segment))
        #expect(score.finalDER.errorRate < 0.01, "\(score.finalDER)")
        #expect(score.wordCount == meeting.words.count && score.unlabelledWordCount == 0)
        // Stored like a device's session, and gone from the live sessions once closed.
        #expect(store.words("test-t1-device").count == meeting.words.count)
        for _ in 0..<400 where sessions.connectionCount > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(sessions.connectionCount == 0)
    }

    @Test func theSessionActsOnlyAsWhoAskedAndNotOnceTheirCredentialIsRevoked() async throws {
        let book = CredentialBook()
        let token = try Credential.generate(.deviceToken)
        book.add(.init(id: token.id, kind: .deviceToken, deviceID: "phone-a", digest: token.digest))
        let sessions = sessions(access: AccessGate(config: AccessConfig(environmentAdminKey: nil), book: book, clock: { 0 }))
        let phoneA = Principal.device(deviceID: "phone-a", tokenID: token.id)

        let own = try await device(sessions, as: phoneA).stream(Self.silence, start: start(Self.silence, conversationID: "own", deviceID: "phone-a"))
        #expect(own.conversationID == "own" && own.words.isEmpty)
        // Another device's session is the session's own refusal, as for a socket with this token.
        await #expect { try await device(sessions, as: phoneA).stream(Self.silence, start: start(Self.silence, conversationID: "other", deviceID: "phone-b")) }
            throws: { ($0 as? InProcessDeviceError)?.code == .sessionEnded && "\($0)".contains("device_mismatch") }
        // A credential revoked since the request opens nothing.
        #expect(book.holds(phoneA))
        book.remove(id: token.id)
        #expect(!book.holds(phoneA))
        await #expect { try await device(sessions, as: phoneA).stream(Self.silence, start: start(Self.silence, conversationID: "late", deviceID: "phone-a")) }
            throws: { ($0 as? InProcessDeviceError)?.code == .refused && "\($0)".contains("401 unauthorized") }
        #expect(try store.load(conversationID: "other") == nil && store.load(conversationID: "late") == nil)
    }

    @Test func aStoppingServerOpensNoSession() async throws {
        let sessions = sessions()
        #expect(sessions.stopSessions(timeoutSeconds: 1) == 0)
        await #expect { try await device(sessions, as: AccessGate.open).stream(Self.silence, start: start(Self.silence, conversationID: "x", deviceID: "d")) }
            throws: { ($0 as? InProcessDeviceError)?.code == .refused && "\($0)".contains("server_stopping") }
    }
}
