import SpeakerSyncStore

/// The store writer's figures in `/metrics`: each commit's duration goes into a histogram as it
/// happens, and the queue depth is read at every scrape. The store only knows `StoreWriterObserver`.
struct StoreMetrics: StoreWriterObserver {
    let metrics: ServerMetrics

    func committed(seconds: Double) {
        metrics.observe("speakersync_store_commit_seconds", [:], seconds, buckets: ServerMetrics.commitBuckets)
    }

    /// Reports `writer`'s queue depth from now on.
    func watchQueue(of writer: StoreWriter) {
        metrics.sample(gauge: "speakersync_store_queue_depth") { [weak writer] in Double(writer?.queueDepth ?? 0) }
    }
}
