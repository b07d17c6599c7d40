import Foundation
import Logging
import PluginHost
import SpeakerSyncAudio
import SpeakerSyncStore
import WebSocketTransport

/// Enrolment: people are named voices of a device, recognised by name in its later sessions.
///
/// `POST /v1/people?device_id=D&name=N[&provider=P]` with a WAV body (a few seconds of that person
/// alone; any rate, mono or the first channel) computes the voice embedding with the provider
/// (default: the server's default provider) and stores the person. `GET /v1/people?device_id=D`
/// lists them, `DELETE /v1/people/{id}` forgets one, and
/// `POST /v1/conversations/{id}/speakers/{label}/person[?name=N]` saves a speaker of a conversation
/// as a person from the voice profile the provider accumulated over the conversation.
struct PeopleRoutes {
    let voices: any VoiceDirectory
    let providers: any ProviderHost
    /// The server's default provider (what sessions without one get), used when enrolment names none.
    let defaultProvider: String?
    let logger: Logger
    static let maxNameLength = 200
    static let maxAudioSeconds = 120.0

    static func register(in table: inout RouteTable, services: APIServices, logger: Logger) {
        let routes = Capability(services.voices.map {
            PeopleRoutes(voices: $0, providers: services.providers, defaultProvider: services.defaultProvider, logger: logger)
        }, absent: "this server keeps no people")
        table.add(.post, "/v1/people", name: "enrol_person", access: .credential) { try routes.get().enrol($0) }
        table.add(.get, "/v1/people", name: "list_people", access: .credential) { context in
            let people = try routes.get()
            let deviceID = try people.device(context)
            return APIHandler.json(["people": try people.voices.people(deviceID: deviceID).map(Self.json)])
        }
        table.add(.delete, "/v1/people/{id}", name: "delete_person", access: .credential) { context in
            let people = try routes.get()
            let id = try context.parameter(.id)
            // A device token deletes only its device's people; another device's answers like a missing one.
            guard try people.voices.deletePerson(id: id, deviceID: context.principal.deviceID) else {
                throw APIError(status: 404, code: "person_not_found", message: "no person with id '\(id)'")
            }
            return APIHandler.json(["deleted": id])
        }
        table.add(.post, "/v1/conversations/{id}/speakers/{label}/person", name: "save_speaker_as_person", access: .conversation(.id)) {
            try routes.get().saveSpeaker($0)
        }
    }

    func enrol(_ context: RouteContext) throws -> HTTPResponse {
        let request = context.request
        let deviceID = try device(context)
        let name = try validName(try required("name", request))
        let provider = request.query["provider"] ?? defaultProvider ?? "speakerkit"
        guard providers.supportsVoiceEmbedding(providerID: provider) else {
            throw APIError(status: 400, code: "provider_cannot_enrol", message: "provider '\(provider)' computes no voice embeddings; use one that does (speakerkit)")
        }
        let audio: AudioBuffer
        do {
            audio = try StreamingResampler.resample(WAVFile.decode(Data(request.body)))
        } catch {
            throw APIError(status: 400, code: "invalid_audio", message: "the body must be a WAV file: \(error)")
        }
        let seconds = Double(audio.samples.count) / Double(audio.sampleRate)
        guard seconds <= Self.maxAudioSeconds else {
            throw APIError(status: 413, code: "audio_too_long", message: String(format: "%.0f s of audio; enrolment takes at most %.0f s", seconds, Self.maxAudioSeconds))
        }
        let embedding: [Float]
        do {
            embedding = try providers.embedVoice(providerID: provider, samples: audio.samples)
        } catch where [.providerCrashed, .providerHung, .providerUnavailable].contains(error.code) {
            throw APIError(status: 503, code: "provider_unavailable", message: error.message)
        } catch {
            throw APIError(status: 422, code: "no_usable_voice", message: error.message)
        }
        let person = PersonRecord(
            personID: UUID().uuidString.lowercased(), deviceID: deviceID, name: name, provider: provider,
            embedding: embedding, speechSeconds: seconds, source: "enrolment")
        try voices.insertPerson(person)
        logger.info("person enrolled", metadata: ["device": "\(deviceID)", "provider": "\(provider)"])
        return APIHandler.json(Self.json(person), status: 201)
    }

    /// A conversation's speaker as a person, from the voice profile its provider accumulated.
    func saveSpeaker(_ context: RouteContext) throws -> HTTPResponse {
        let conversation = try context.conversation
        let conversationID = try context.parameter(.id)
        let label = try context.parameter(.label)
        guard let profile = try voices.speakerProfile(conversationID: conversationID, label: label, provider: conversation.provider) else {
            throw APIError(status: 404, code: "speaker_not_found",
                           message: "conversation '\(conversationID)' has no voice profile for '\(label)' from provider \(conversation.provider) (profiles are kept by providers with speaker embeddings, at the end of each session)")
        }
        let name = try validName(context.request.query["name"] ?? label)
        let person = PersonRecord(
            personID: UUID().uuidString.lowercased(), deviceID: conversation.deviceID, name: name, provider: conversation.provider,
            embedding: profile.embedding, speechSeconds: profile.speechSeconds, source: "conversation:\(conversationID)/\(label)")
        try voices.insertPerson(person)
        return APIHandler.json(Self.json(person), status: 201)
    }

    /// The device a people route acts on: a device token's own (device_id may be omitted), or the
    /// admin's required device_id.
    private func device(_ context: RouteContext) throws -> String {
        guard let device = try APIHandler.scopedDevice(try context.principal, requested: context.request.query["device_id"]) else {
            return try required("device_id", context.request)
        }
        return device
    }

    private func required(_ key: String, _ request: HTTPRequest) throws -> String {
        guard let value = request.query[key], !value.isEmpty else {
            throw APIError(status: 400, code: "missing_parameter", message: "\(key) is required")
        }
        return value
    }

    private func validName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= Self.maxNameLength, !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError(status: 400, code: "invalid_name", message: "name must be 1 to \(Self.maxNameLength) printable characters")
        }
        return trimmed
    }

    static func json(_ person: PersonRecord) -> [String: Any] {
        ["person_id": person.personID, "device_id": person.deviceID, "name": person.name, "provider": person.provider,
         "speech_seconds": person.speechSeconds, "dimension": person.embedding.count, "source": person.source]
    }
}
