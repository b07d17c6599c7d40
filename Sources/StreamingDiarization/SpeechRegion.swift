/// One stretch of speech found by the VAD, cut into frames that each get a speaker.
struct SpeechRegion: Sendable {
    struct Frame: Sendable {
        var startSeconds: Double
        var endSeconds: Double
        var embedding: [Float]?
        /// Seconds of audio the embedding was computed from.
        var windowSeconds: Double = 0
        /// The speaker decided for this frame (online, or by the offline pass).
        var speaker: Int32?
        /// Cosine distance to that speaker's profile when decided (for confidence).
        var distance: Float?
        /// Whether the frame has been through embedding (frames too short are decided from neighbours).
        var processed = false
    }

    let serial: Int
    /// Frame origin: fixed at first sight, so frame indices stay stable while the region grows.
    let originSeconds: Double
    var startSeconds: Double
    /// nil while the speech is still going on.
    var endSeconds: Double?
    var frames: [Frame] = []

    init(serial: Int, startSeconds: Double, endSeconds: Double?) {
        self.serial = serial
        self.originSeconds = startSeconds
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }

    var isOpen: Bool { endSeconds == nil }

    /// Every frame has a final span and has been processed.
    var isSettled: Bool { !isOpen && frames.allSatisfy(\.processed) && (frames.last?.endSeconds ?? startSeconds) >= endSeconds! - 1e-9 }
}
