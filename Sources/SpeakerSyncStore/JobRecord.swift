import Foundation
import PostgresClient

/// One row of `jobs` (migration 0008): a background job as stored, whichever server runs it.
public struct JobRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case rediarization
        case testRecording = "test_recording"
    }

    public enum Status: String, Sendable {
        case queued, running, done, failed

        public var isFinished: Bool { self == .done || self == .failed }
    }

    public var id: String
    public var kind: Kind
    /// Who may see it: the conversation's device, or the device a test recording streams as.
    public var deviceID: String
    public var conversationID: String?
    public var provider: String
    /// JSON text: a re-diarization's provider options, a test recording's request.
    public var requestJSON: String
    public var status: Status
    /// 0…1.
    public var progress: Double
    public var failureReason: String?
    /// JSON text written by the job (figures, a report); nil until it writes one.
    public var resultJSON: String?
    public var attempts: Int
    public var serverInstance: Int?
    public var createdAt: Date
    public var startedAt: Date?
    public var finishedAt: Date?
    public var heartbeatAt: Date?

    /// What a new job is made of; the rest starts empty.
    public init(id: String, kind: Kind, deviceID: String, conversationID: String?, provider: String, requestJSON: String,
                resultJSON: String? = nil) {
        self.id = id
        self.kind = kind
        self.deviceID = deviceID
        self.conversationID = conversationID
        self.provider = provider
        self.requestJSON = requestJSON
        self.resultJSON = resultJSON
        status = .queued
        progress = 0
        attempts = 0
        createdAt = Date()
    }

    /// The columns every read returns, in the names `init(row:)` decodes.
    static let columns = """
        id, kind, device_id, conversation_id, provider, request, status, progress, failure_reason, result, attempts,
        server_instance, created_at, started_at, finished_at, heartbeat_at
        """

    init(row: PGRow) throws {
        id = try row.decode(String.self, column: "id")
        let kindText = try row.decode(String.self, column: "kind")
        guard let kind = Kind(rawValue: kindText) else {
            throw StoreError(code: .invalidData, message: "column kind of jobs: unknown value \(kindText)")
        }
        self.kind = kind
        let statusText = try row.decode(String.self, column: "status")
        guard let status = Status(rawValue: statusText) else {
            throw StoreError(code: .invalidData, message: "column status of jobs: unknown value \(statusText)")
        }
        self.status = status
        deviceID = try row.decode(String.self, column: "device_id")
        conversationID = try row.decode(String?.self, column: "conversation_id")
        provider = try row.decode(String.self, column: "provider")
        requestJSON = try row.decode(String.self, column: "request")
        progress = try row.decode(Double.self, column: "progress")
        failureReason = try row.decode(String?.self, column: "failure_reason")
        resultJSON = try row.decode(String?.self, column: "result")
        attempts = try row.decode(Int.self, column: "attempts")
        serverInstance = try row.decode(Int?.self, column: "server_instance")
        createdAt = try row.decode(Date.self, column: "created_at")
        startedAt = try row.decode(Date?.self, column: "started_at")
        finishedAt = try row.decode(Date?.self, column: "finished_at")
        heartbeatAt = try row.decode(Date?.self, column: "heartbeat_at")
    }
}
