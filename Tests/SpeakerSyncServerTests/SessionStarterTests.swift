import Logging
import PluginHost
import SessionProtocol
import Testing
@testable import SpeakerSyncServer

/// `SessionStarter.decide`: what a start becomes from the request and what the start read, before
/// anything is claimed, with the real dlopen'd plugins as the server's providers.
@Suite struct SessionStarterTests {
    static let plugins = PluginRegistry(directory: ResourceLocator.pluginsDirectory(nil), logger: Logger(label: "test"))
    let starter = SessionStarter(providers: Self.plugins, recognizers: nil, logger: Logger(label: "test"))

    func request(provider: String = "energy", named: Bool = true, shadows: [String] = [], asr: ASRMode = .device) -> StartRequest {
        var request = StartRequest(deviceID: "phone-1", provider: provider, sampleRate: 16_000, encoding: .pcmS16LE, asr: asr)
        request.providerNamed = named
        request.shadowProviders = shadows
        return request
    }

    func refusal(_ result: Result<SessionStarter.Decision, ProtocolError>) -> ProtocolErrorCode? {
        if case .failure(let error) = result { error.code } else { nil }
    }

    @Test func theDevicesConsoleChoiceIsTakenWhenItIsAvailable() throws {
        let result = starter.decide(request(provider: "energy", named: false), facts: StartFacts(deviceProvider: "speakerkit", owner: nil),
                                    conversationID: "c1", principalDevice: "phone-1")
        let decision = try result.get()
        #expect(decision.request.provider == "speakerkit" && decision.providerSource == "device")
    }

    @Test func aChoiceThatIsGoneFallsBackToTheServerDefault() throws {
        let result = starter.decide(request(provider: "energy", named: false), facts: StartFacts(deviceProvider: "no-such-provider", owner: nil),
                                    conversationID: "c1", principalDevice: "phone-1")
        let decision = try result.get()
        #expect(decision.request.provider == "energy" && decision.providerSource == nil)
    }

    @Test func unknownProvidersAndImpossibleShadowsAreRefusedWithTheirCodes() {
        let facts = StartFacts()
        #expect(refusal(starter.decide(request(provider: "nope"), facts: facts, conversationID: "c1", principalDevice: nil)) == .unknownProvider)
        #expect(refusal(starter.decide(request(shadows: ["energy"]), facts: facts, conversationID: "c1", principalDevice: nil)) == .invalidField)
        #expect(refusal(starter.decide(request(shadows: ["nope"]), facts: facts, conversationID: "c1", principalDevice: nil)) == .unknownProvider)
        #expect(refusal(starter.decide(request(shadows: ["device"]), facts: facts, conversationID: "c1", principalDevice: nil)) == .invalidField)
    }

    @Test func serverSpeechRecognitionNeedsARecogniser() {
        let result = starter.decide(request(asr: .server), facts: StartFacts(), conversationID: "c1", principalDevice: nil)
        #expect(refusal(result) == .asrUnavailable)
    }

    @Test func anotherDevicesConversationIsNotFoundAndTheAdminMayResumeIt() {
        let facts = StartFacts(deviceProvider: nil, owner: "phone-2")
        #expect(refusal(starter.decide(request(), facts: facts, conversationID: "c1", principalDevice: "phone-1")) == .conversationNotFound)
        #expect(refusal(starter.decide(request(), facts: facts, conversationID: "c1", principalDevice: "phone-2")) == nil)
        #expect(refusal(starter.decide(request(), facts: facts, conversationID: "c1", principalDevice: nil)) == nil)
    }
}
