import Foundation
import Logging
// TEMPORARY STUB
final class PostgresBackend: SessionStore, ConversationReader, @unchecked Sendable {
    init(connectionString: String, schemaDirectory: URL, logger: Logger) throws {}
    func persist(_ step: PersistStep, conversationID: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) { completion(.success(())) }
    func load(conversationID: String) throws -> StoredConversation? { nil }
    func listConversations(deviceID: String?, limit: Int, cursor: String?) throws -> ConversationPage { ConversationPage(conversations: [], nextCursor: nil) }
    func conversation(id: String) throws -> ConversationSummary? { nil }
    func transcript(id: String) throws -> TranscriptDocument? { nil }
    func checkHealth() throws {}
    func shutdown() {}
}
final class EmbeddedPostgresCluster: @unchecked Sendable {
    init(dataDirectory: String, logger: Logger) {}
    func start() throws -> String { "" }
    func stop() {}
}
