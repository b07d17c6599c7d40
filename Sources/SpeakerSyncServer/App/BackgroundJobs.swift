/// The server's background job services, stopped together at shutdown.
struct BackgroundJobs: Sendable {
    let rediarization: DiarizationJobService
    let testRecordings: TestRecordingService

    /// Stops taking jobs; a re-diarization running here goes back to the queue, a test recording
    /// running here is failed with the reason. Before the listener closes and the providers stop:
    /// otherwise the jobs would see their streams and providers end and record that as their failure.
    func shutdown() {
        rediarization.shutdown()
        testRecordings.shutdown()
    }
}
