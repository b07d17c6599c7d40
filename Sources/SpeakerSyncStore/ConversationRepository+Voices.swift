import Foundation
import PostgresClient

/// People and speaker voice profiles (schema/0002_voices.sql). Embeddings go in as `real[]` bind
/// parameters and come back as comma-separated text, parsed here.
extension ConversationRepository {
    public func insertPerson(_ person: PersonRecord) throws {
        try withConnection { connection in
            _ = try connection.execute(
                "INSERT INTO people (person_id, device_id, name, provider, embedding, speech_seconds, source) VALUES ($1, $2, $3, $4, $5::real[], $6, $7)",
                [person.personID, person.deviceID, person.name, person.provider, person.embedding, person.speechSeconds, person.source])
        }
    }

    /// The device's people enrolled with `provider` (all providers when nil), oldest first.
    public func people(deviceID: String, provider: String?) throws -> [PersonRecord] {
        try withConnection { connection in
            let result = try connection.query(
                """
                SELECT person_id, device_id, name, provider, array_to_string(embedding, ',') AS embedding, speech_seconds, source
                FROM people WHERE device_id = $1 AND ($2::text IS NULL OR provider = $2) ORDER BY created_at, person_id
                """, [deviceID, provider])
            return try result.rows.map { row in
                PersonRecord(
                    personID: try row.decode(String.self, column: "person_id"), deviceID: try row.decode(String.self, column: "device_id"),
                    name: try row.decode(String.self, column: "name"), provider: try row.decode(String.self, column: "provider"),
                    embedding: try Self.floats(row.decode(String.self, column: "embedding"), column: "embedding"),
                    speechSeconds: try row.decode(Double.self, column: "speech_seconds"), source: try row.decode(String.self, column: "source"))
            }
        }
    }

    /// Deletes a person (only of `deviceID` when given); false when there was none with that id there.
    public func deletePerson(id: String, deviceID: String? = nil) throws -> Bool {
        try withConnection { connection in
            try connection.query("DELETE FROM people WHERE person_id = $1 AND ($2::text IS NULL OR device_id = $2) RETURNING person_id",
                                 [id, deviceID]).rows.count == 1
        }
    }

    public func speakerProfiles(conversationID: String, provider: String) throws -> [SpeakerProfileRecord] {
        try withConnection { connection in
            let result = try connection.query(
                "SELECT label, array_to_string(embedding, ',') AS embedding, speech_seconds FROM speaker_profiles WHERE conversation_id = $1 AND provider = $2 ORDER BY label",
                [conversationID, provider])
            return try result.rows.map { row in
                SpeakerProfileRecord(
                    label: try row.decode(String.self, column: "label"),
                    embedding: try Self.floats(row.decode(String.self, column: "embedding"), column: "embedding"),
                    speechSeconds: try row.decode(Double.self, column: "speech_seconds"))
            }
        }
    }

    static func floats(_ text: String, column: String) throws -> [Float] {
        try text.split(separator: ",").map { field in
            guard let value = Float(field) else {
                throw StoreError(code: .invalidData, message: "column \(column): '\(field)' is not a real number")
            }
            return value
        }
    }
}
