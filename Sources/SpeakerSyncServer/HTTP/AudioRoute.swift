import FLACCodec
import Foundation
import SpeakerSyncStore
import WebSocketTransport

/// `GET /v1/conversations/{id}/audio[?format=wav|flac]`: the conversation's stored audio (sessions
/// started with `store_audio`) as one 16-bit mono file at the device's sample rate, with silence where
/// nothing was stored; `Range` requests (one range) answer 206 so a player can seek.
struct AudioRoute {
    let directory: any LabellingDirectory

    static func register(in table: inout RouteTable, services: APIServices) {
        let route = Capability(services.labellings.map { AudioRoute(directory: $0) }, absent: "this server keeps no audio")
        table.add(.get, "/v1/conversations/{id}/audio", name: "audio", access: .conversation(.id)) { context in
            try route.get().answer(conversationID: try context.parameter(.id), context.request)
        }
    }

    func answer(conversationID id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let format = request.query["format"] ?? "wav"
        guard ["wav", "flac"].contains(format) else {
            throw APIError(status: 400, code: "invalid_parameter", message: "format must be wav or flac")
        }
        let chunks = try directory.audioChunks(conversationID: id)
        guard let audio = try StoredAudio.assemble(chunks, decode: { try FLACDecoder.decode($0.flac).samples }) else {
            throw APIError(status: 404, code: "audio_not_stored",
                           message: "conversation \(id) has no stored audio (start its sessions with \"store_audio\": true)")
        }
        let body: [UInt8]
        if format == "wav" {
            body = audio.wav
        } else {
            do {
                body = try FLACEncoder.encode(audio.samples, sampleRate: audio.sampleRate)
            } catch {
                throw APIError(status: 500, code: "internal_error", message: "the audio could not be encoded: \(error)")
            }
        }
        let contentType = format == "wav" ? "audio/wav" : "audio/flac"
        var headers = [("Accept-Ranges", "bytes"), ("Content-Disposition", "inline; filename=\"\(id).\(format)\"")]
        switch ByteRange.parse(request.headers["range"], length: body.count) {
        case .range(let range)?:
            headers.append(("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound)/\(body.count)"))
            return HTTPResponse(status: 206, contentType: contentType, headers: headers, body: Array(body[range]))
        case .unsatisfiable?:
            headers.append(("Content-Range", "bytes */\(body.count)"))
            return HTTPResponse(status: 416, contentType: "application/json", headers: headers,
                                body: Array(#"{"error":{"code":"range_not_satisfiable","message":"the range lies outside the audio"}}"#.utf8))
        case nil:
            return HTTPResponse(status: 200, contentType: contentType, headers: headers, body: body)
        }
    }
}
