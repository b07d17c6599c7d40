import CSherpaOnnxSpeakers
import Foundation
import Synchronization
import VoiceActivity

/// sherpa-onnx's speaker functions, looked up in the library VoiceActivity opened (one dlopen, one
/// version check for the whole C API). Immutable; any thread.
final class SherpaOnnxSpeakerAPI: Sendable {
    let library: SherpaOnnxLibrary
    let createExtractor: SherpaOnnxCreateSpeakerEmbeddingExtractorFn
    let destroyExtractor: SherpaOnnxDestroySpeakerEmbeddingExtractorFn
    let extractorDimension: SherpaOnnxSpeakerEmbeddingExtractorDimFn
    let createStream: SherpaOnnxSpeakerEmbeddingExtractorCreateStreamFn
    let isReady: SherpaOnnxSpeakerEmbeddingExtractorIsReadyFn
    let computeEmbedding: SherpaOnnxSpeakerEmbeddingExtractorComputeEmbeddingFn
    let destroyEmbedding: SherpaOnnxSpeakerEmbeddingExtractorDestroyEmbeddingFn
    let acceptWaveform: SherpaOnnxOnlineStreamAcceptWaveformFn
    let inputFinished: SherpaOnnxOnlineStreamInputFinishedFn
    let destroyStream: SherpaOnnxDestroyOnlineStreamFn
    let createDiarization: SherpaOnnxCreateOfflineSpeakerDiarizationFn
    let destroyDiarization: SherpaOnnxDestroyOfflineSpeakerDiarizationFn
    let diarizationSampleRate: SherpaOnnxOfflineSpeakerDiarizationGetSampleRateFn
    let setDiarizationConfig: SherpaOnnxOfflineSpeakerDiarizationSetConfigFn
    let process: SherpaOnnxOfflineSpeakerDiarizationProcessFn
    let segmentCount: SherpaOnnxOfflineSpeakerDiarizationResultGetNumSegmentsFn
    let sortedSegments: SherpaOnnxOfflineSpeakerDiarizationResultSortByStartTimeFn
    let destroySegments: SherpaOnnxOfflineSpeakerDiarizationDestroySegmentFn
    let destroyResult: SherpaOnnxOfflineSpeakerDiarizationDestroyResultFn

    private init(library: SherpaOnnxLibrary) throws(VoiceActivityError) {
        self.library = library
        createExtractor = try library.function("SherpaOnnxCreateSpeakerEmbeddingExtractor", as: SherpaOnnxCreateSpeakerEmbeddingExtractorFn.self)
        destroyExtractor = try library.function("SherpaOnnxDestroySpeakerEmbeddingExtractor", as: SherpaOnnxDestroySpeakerEmbeddingExtractorFn.self)
        extractorDimension = try library.function("SherpaOnnxSpeakerEmbeddingExtractorDim", as: SherpaOnnxSpeakerEmbeddingExtractorDimFn.self)
        createStream = try library.function("SherpaOnnxSpeakerEmbeddingExtractorCreateStream", as: SherpaOnnxSpeakerEmbeddingExtractorCreateStreamFn.self)
        isReady = try library.function("SherpaOnnxSpeakerEmbeddingExtractorIsReady", as: SherpaOnnxSpeakerEmbeddingExtractorIsReadyFn.self)
        computeEmbedding = try library.function("SherpaOnnxSpeakerEmbeddingExtractorComputeEmbedding", as: SherpaOnnxSpeakerEmbeddingExtractorComputeEmbeddingFn.self)
        destroyEmbedding = try library.function("SherpaOnnxSpeakerEmbeddingExtractorDestroyEmbedding", as: SherpaOnnxSpeakerEmbeddingExtractorDestroyEmbeddingFn.self)
        acceptWaveform = try library.function("SherpaOnnxOnlineStreamAcceptWaveform", as: SherpaOnnxOnlineStreamAcceptWaveformFn.self)
        inputFinished = try library.function("SherpaOnnxOnlineStreamInputFinished", as: SherpaOnnxOnlineStreamInputFinishedFn.self)
        destroyStream = try library.function("SherpaOnnxDestroyOnlineStream", as: SherpaOnnxDestroyOnlineStreamFn.self)
        createDiarization = try library.function("SherpaOnnxCreateOfflineSpeakerDiarization", as: SherpaOnnxCreateOfflineSpeakerDiarizationFn.self)
        destroyDiarization = try library.function("SherpaOnnxDestroyOfflineSpeakerDiarization", as: SherpaOnnxDestroyOfflineSpeakerDiarizationFn.self)
        diarizationSampleRate = try library.function("SherpaOnnxOfflineSpeakerDiarizationGetSampleRate", as: SherpaOnnxOfflineSpeakerDiarizationGetSampleRateFn.self)
        setDiarizationConfig = try library.function("SherpaOnnxOfflineSpeakerDiarizationSetConfig", as: SherpaOnnxOfflineSpeakerDiarizationSetConfigFn.self)
        process = try library.function("SherpaOnnxOfflineSpeakerDiarizationProcess", as: SherpaOnnxOfflineSpeakerDiarizationProcessFn.self)
        segmentCount = try library.function("SherpaOnnxOfflineSpeakerDiarizationResultGetNumSegments", as: SherpaOnnxOfflineSpeakerDiarizationResultGetNumSegmentsFn.self)
        sortedSegments = try library.function("SherpaOnnxOfflineSpeakerDiarizationResultSortByStartTime", as: SherpaOnnxOfflineSpeakerDiarizationResultSortByStartTimeFn.self)
        destroySegments = try library.function("SherpaOnnxOfflineSpeakerDiarizationDestroySegment", as: SherpaOnnxOfflineSpeakerDiarizationDestroySegmentFn.self)
        destroyResult = try library.function("SherpaOnnxOfflineSpeakerDiarizationDestroyResult", as: SherpaOnnxOfflineSpeakerDiarizationDestroyResultFn.self)
    }

    private static let loaded = Mutex<[String: SherpaOnnxSpeakerAPI]>([:])

    /// The API of the library in `directory` (default: where VoiceActivity finds it).
    static func load(directory: String = VendorLocation.sherpaLibraryDirectory()) throws(SherpaOnnxSpeakersError) -> SherpaOnnxSpeakerAPI {
        do {
            return try loaded.withLock { (apis) throws(VoiceActivityError) -> SherpaOnnxSpeakerAPI in
                if let api = apis[directory] { return api }
                let api = try SherpaOnnxSpeakerAPI(library: SherpaOnnxLibrary.load(directory: directory))
                apis[directory] = api
                return api
            }
        } catch {
            throw SherpaOnnxSpeakersError(.libraryUnavailable, error.message)
        }
    }
}
