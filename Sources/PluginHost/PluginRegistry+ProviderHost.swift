import Dispatch

/// The registry as the server's provider host with `--provider-isolation none`: every provider runs in
/// the server's own process, so a crashing plugin takes the server down (the isolation modes exist for
/// that). Also what each worker process runs inside.
extension PluginRegistry: ProviderHost {
    /// Unavailable when the plugin said so at load (revision 4's `availability`).
    public func status(of providerID: String) -> ProviderStatus {
        provider(id: providerID)?.unavailableReason.map { .unavailable(reason: $0, retryAfterSeconds: nil) } ?? .available
    }

    public func makeSession(_ request: ProviderSessionRequest, queue: DispatchQueue,
                            events: @escaping @Sendable (ProviderEvent) -> Void) throws(PluginError) -> any ProviderSession {
        let instance = try makeInstance(
            providerID: request.providerID, sessionID: request.sessionID, sampleRate: request.sampleRate,
            optionsJSON: request.optionsJSON, knownSpeakers: request.knownSpeakers)
        return InProcessProviderSession(instance: instance, knownSpeakers: request.knownSpeakers.map(\.speaker), sampleRate: request.sampleRate,
                                        events: events)
    }

    /// None: every provider runs in this process.
    public var workers: [ProviderWorkerInfo] { [] }

    /// Nothing to stop: libraries stay loaded for the process (RTLD_NODELETE).
    public func shutdown() {}
}
