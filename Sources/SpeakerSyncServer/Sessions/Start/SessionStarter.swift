import Logging
import PluginHost
import SessionProtocol
import SpeechRecognition

/// What a start may become, decided from the request and what the start read (the device's
/// provider choice, the conversation's owner), before anything is claimed or created: the request
/// with its provider settled, or the protocol error that refuses it. The runner then counts the
/// device's session, claims the conversation and creates the instances; every refusal, here or
/// later, goes through its one cleanup path (`failStart`).
struct SessionStarter {
    let providers: any ProviderHost
    /// nil: this server does not recognise speech (`asr: "server"` is refused).
    let recognizers: RecognizerPool?
    let logger: Logger

    struct Decision {
        /// The start with the provider it gets.
        var request: StartRequest
        /// `"device"` when the device's console choice was taken; nil: as the start said.
        var providerSource: String?
    }

    func decide(_ start: StartRequest, facts: StartFacts, conversationID: String, principalDevice: String?) -> Result<Decision, ProtocolError> {
        var decision = Decision(request: start)
        // A start that names no provider gets its device's console choice, then the server default.
        // A chosen provider that is gone or held back falls back to the default rather than failing.
        if let chosen = facts.deviceProvider {
            if providers.isAvailable(chosen) {
                decision.request.provider = chosen
                decision.providerSource = "device"
            } else {
                logger.warning("the device's provider is not available; using the server default",
                               metadata: ["device_provider": "\(chosen)", "provider": "\(start.provider)"])
            }
        }
        let request = decision.request
        guard providers.provider(id: request.provider) != nil else {
            let known = providers.providers.map(\.id).joined(separator: ", ")
            return .failure(ProtocolError(.unknownProvider, "unknown provider '\(request.provider)'; this server has: \(known)"))
        }
        if case .unavailable(let reason, _) = providers.status(of: request.provider) {
            return .failure(ProtocolError(.providerUnavailable, "provider \(request.provider) is unavailable: \(reason)"))
        }
        if let failure = shadowProvidersRefusal(request) { return .failure(failure) }
        if request.asr == .server, let failure = recognizerRefusal() { return .failure(failure) }
        // A device token resumes only its own device's conversations; it must not even make the
        // other device's session hand over, so this is decided before the claim.
        if let device = principalDevice, let owner = facts.owner, owner != device {
            return .failure(ProtocolError(.conversationNotFound, "this device has no conversation '\(conversationID)'"))
        }
        return .success(decision)
    }

    /// Why the start's shadow providers cannot run here.
    func shadowProvidersRefusal(_ request: StartRequest) -> ProtocolError? {
        for shadow in request.shadowProviders {
            if shadow == request.provider {
                return ProtocolError(.invalidField, "start: shadow_providers names the session's own provider \"\(shadow)\"")
            }
            guard let descriptor = providers.provider(id: shadow) else {
                let known = providers.providers.map(\.id).joined(separator: ", ")
                return ProtocolError(.unknownProvider, "unknown shadow provider '\(shadow)'; this server has: \(known)")
            }
            guard case .plugin = descriptor.kind else {
                return ProtocolError(.invalidField, "start: shadow provider \"\(shadow)\" does not diarize on the server (only plugins can shadow)")
            }
            if case .unavailable(let reason, _) = providers.status(of: shadow) {
                return ProtocolError(.providerUnavailable, "shadow provider \(shadow) is unavailable: \(reason)")
            }
        }
        return nil
    }

    /// `asr: "server"` needs a recogniser. Loads the model the first time (a few tenths of a second,
    /// once per process); later starts return at once.
    private func recognizerRefusal() -> ProtocolError? {
        guard let recognizers else {
            return ProtocolError(.asrUnavailable, "this server does not recognise speech; send words from the device (asr \"device\")")
        }
        do {
            try recognizers.prepare()
            return nil
        } catch {
            logger.error("speech recogniser unavailable", metadata: ["error": "\(error)"])
            // The code says what is wrong (model_not_found, …); the paths stay in the log.
            let reason = (error as? RecognizerError)?.code.rawValue ?? "internal_error"
            return ProtocolError(.asrUnavailable, "server-side speech recognition is unavailable (\(reason)); send words from the device (asr \"device\")")
        }
    }

    /// Options the plugin refused are the client's mistake; a provider held back after crashes is
    /// unavailable for now; anything else is the provider's failure.
    static func startFailure(_ error: any Error, provider: String) -> ProtocolError {
        guard let error = error as? PluginError else {
            return ProtocolError(.providerFailed, "provider \(provider) could not start")
        }
        switch error.code {
        case .invalidOptions:
            return ProtocolError(.invalidOptions, "provider \(provider) refused the options: \(error.message)")
        case .providerUnavailable:
            return ProtocolError(.providerUnavailable, "provider \(provider) is unavailable: \(error.message)")
        default:
            return ProtocolError(.providerFailed, "provider \(provider) could not start: \(error)")
        }
    }

    /// A shadow that could not start: the plugin's own error is the provider's words; anything else
    /// stays in the log.
    static func shadowStartFailure(_ error: any Error, provider: String) -> ProtocolError {
        if let error = error as? PluginError, error.code == .providerUnavailable {
            return ProtocolError(.providerUnavailable, "shadow provider \(provider) is unavailable: \(error.message)")
        }
        let detail = (error as? PluginError).map { "\($0)" } ?? "an internal error"
        return ProtocolError(.providerFailed, "shadow provider \(provider) could not start: \(detail)")
    }
}
