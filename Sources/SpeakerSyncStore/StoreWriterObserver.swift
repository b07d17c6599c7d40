/// Hears what the store writer does, for metrics, without the store knowing who listens (the server's
/// `ServerMetrics` adapts it). Called on the writer threads: it must be quick and must not block.
public protocol StoreWriterObserver: Sendable {
    /// A transaction was committed; `seconds` is its wall time, from BEGIN to COMMIT.
    func committed(seconds: Double)
}
