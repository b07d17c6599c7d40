import CSherpaOnnxSpeakers
import Foundation
import VoiceActivity

/// sherpa-onnx's offline speaker diarization over a whole recording: pyannote segmentation (overlap
/// aware: segments of different speakers may overlap), an embedding per segment and speaker, then
/// clustering by cosine distance (a known number of speakers, or a distance threshold).
///
/// Both model files are checked first (`SherpaOnnxModelCheck`). `process` is not reentrant: one call
/// at a time per diarizer (the clustering settings are the object's). Sendable so a pool
/// (`OfflineDiarizerPool`) can lend it across threads: the pool guarantees the one caller at a time.
public final class OfflineSpeakerDiarizer: @unchecked Sendable {
    /// One stretch of one speaker. Speaker ids are the library's cluster numbers (gaps are possible).
    public struct Segment: Sendable, Equatable {
        public var startSeconds: Double
        public var endSeconds: Double
        public var speaker: Int
        /// In [-1, 1], nil when the library computed none.
        public var confidence: Double?
    }

    /// How clusters are formed: `speakerCount` when known, else `distanceThreshold` (cosine distance,
    /// 1 − similarity: smaller finds more speakers). Segments shorter than `minimumSegmentSeconds` are
    /// dropped; gaps up to `mergeGapSeconds` within one speaker are closed.
    public struct Clustering: Sendable, Equatable {
        public var speakerCount: Int?
        public var distanceThreshold: Double
        public var minimumSegmentSeconds: Double
        public var mergeGapSeconds: Double

        public init(speakerCount: Int? = nil, distanceThreshold: Double = 0.5, minimumSegmentSeconds: Double = 0.3, mergeGapSeconds: Double = 0.5) {
            self.speakerCount = speakerCount
            self.distanceThreshold = distanceThreshold
            self.minimumSegmentSeconds = minimumSegmentSeconds
            self.mergeGapSeconds = mergeGapSeconds
        }

        public static let `default` = Clustering()
    }

    public let segmentationModelPath: String
    public let embeddingModelPath: String
    public let sampleRate: Int
    private let api: SherpaOnnxSpeakerAPI
    private let handle: OpaquePointer
    private let lock = NSLock()

    public init(segmentationModelPath: String, embeddingModelPath: String, clustering: Clustering = .default, threads: Int = 1,
                libraryDirectory: String? = nil) throws(SherpaOnnxSpeakersError) {
        let segmentation = try OnnxModelDescription.read(path: segmentationModelPath)
        try SherpaOnnxModelCheck.segmentationModel(segmentation, path: segmentationModelPath)
        let embedding = try OnnxModelDescription.read(path: embeddingModelPath)
        try SherpaOnnxModelCheck.embeddingModel(embedding, path: embeddingModelPath)
        let api = try SherpaOnnxSpeakerAPI.load(directory: libraryDirectory ?? VendorLocation.sherpaLibraryDirectory())
        let created: OpaquePointer? = Self.withConfig(
            segmentationModelPath, embeddingModelPath, clustering, threads) { config in api.library.serialisingLifecycle { api.createDiarization(&config) } }
        guard let created else {
            throw SherpaOnnxSpeakersError(.createFailed, "sherpa-onnx could not create the diarization from \(segmentationModelPath) and \(embeddingModelPath)")
        }
        self.segmentationModelPath = segmentationModelPath
        self.embeddingModelPath = embeddingModelPath
        self.api = api
        self.handle = created
        self.sampleRate = Int(api.diarizationSampleRate(created))
    }

    deinit {
        api.library.serialisingLifecycle { api.destroyDiarization(handle) }
    }

    /// Diarizes `samples` (mono, at `sampleRate`) with `clustering`; segments sorted by start.
    public func process(_ samples: UnsafeBufferPointer<Float>, clustering: Clustering) throws(SherpaOnnxSpeakersError) -> [Segment] {
        guard samples.count <= Int(Int32.max) else { throw SherpaOnnxSpeakersError(.invalidAudio, "\(samples.count) samples are more than one call takes") }
        guard samples.allSatisfy(\.isFinite) else { throw SherpaOnnxSpeakersError(.invalidAudio, "the audio holds a non-finite sample") }
        lock.lock()
        defer { lock.unlock() }
        let diarization = handle
        Self.withConfig(segmentationModelPath, embeddingModelPath, clustering, 1) { config in api.setDiarizationConfig(diarization, &config) }
        guard let result = api.process(diarization, samples.baseAddress, Int32(samples.count)) else {
            throw SherpaOnnxSpeakersError(.createFailed, "sherpa-onnx returned no diarization result")
        }
        defer { api.destroyResult(result) }
        let count = Int(api.segmentCount(result))
        // No speech: a result without segments, whose sorted list is NULL.
        guard count > 0, let sorted = api.sortedSegments(result) else { return [] }
        defer { api.destroySegments(sorted) }
        let duration = Double(samples.count) / Double(sampleRate)
        return (0 ..< count).compactMap { index in
            let raw = sorted[index]
            // Ends may pass the audio's end by a frame: clamp.
            let start = max(0, min(Double(raw.start), duration)), end = max(0, min(Double(raw.end), duration))
            guard end > start else { return nil }
            return Segment(startSeconds: start, endSeconds: end, speaker: Int(raw.speaker),
                           confidence: raw.confidence >= -1 ? Double(raw.confidence) : nil)
        }
    }

    private static func withConfig<R>(_ segmentation: String, _ embedding: String, _ clustering: Clustering, _ threads: Int,
                                      _ body: (inout SherpaOnnxOfflineSpeakerDiarizationConfig) -> R) -> R {
        segmentation.withCString { segmentationPath in
            embedding.withCString { embeddingPath in
                "cpu".withCString { provider in
                    var config = SherpaOnnxOfflineSpeakerDiarizationConfig()
                    config.segmentation.pyannote.model = segmentationPath
                    config.segmentation.num_threads = Int32(max(1, threads))
                    config.segmentation.provider = provider
                    config.embedding.model = embeddingPath
                    config.embedding.num_threads = Int32(max(1, threads))
                    config.embedding.provider = provider
                    config.clustering.num_clusters = Int32(clustering.speakerCount ?? -1)
                    config.clustering.threshold = Float(clustering.distanceThreshold)
                    config.clustering.compute_confidence = 1
                    // 0 would mean the library's default: a tiny positive value asks for none.
                    config.min_duration_on = Float(max(clustering.minimumSegmentSeconds, 1e-6))
                    config.min_duration_off = Float(max(clustering.mergeGapSeconds, 1e-6))
                    return body(&config)
                }
            }
        }
    }
}
