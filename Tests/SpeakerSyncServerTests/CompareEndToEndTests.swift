import DiarizationScoring
import Foundation
import MeetingSynth
import PostgresClient
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// `GET …/compare` and `PUT …/references/{name}` against a real server: compare's DER against an
/// uploaded reference is `speakersync eval`'s on the same turns, and the routes are scoped and refuse
/// bad input with what is wrong.
@Suite(.serialized) struct CompareEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    /// A console test recording (the eval machinery, streaming through the server) scores energy
    /// against the synthetic truth; the same truth uploaded as a reference and compared with the stored
    /// live labelling gives the same DER, with and without the collar.
    @Test func compareAgainstAnUploadedReferenceIsEvalsDER() async throws {
        let server = try TestServer()
        // Seed 31, 6 turns: a meeting no other test or figure uses.
        let started = try server.request("POST", "/v1/test-recordings", body: Array(#"{"provider":"energy","turns":6,"speed":8,"seed":31}"#.utf8))
        #expect(started.status == 202)
        let id = try #require((started.json() as? [String: Any])?["id"] as? String)
        var finished: [String: Any] = [:]
        for _ in 0..<1200 {
            finished = try server.json("/v1/test-recordings/\(id)").body
            if ["done", "failed"].contains(finished["status"] as? String) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let result = try #require((finished["results"] as? [[String: Any]])?.first)
        #expect(result["status"] as? String == "done")
        let conversation = try #require(result["conversation_id"] as? String)

        // The truth exactly as eval read it: the same synthesis, written the same way.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-compare-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try MeetingSet.write(MeetingSetConfig(speakerCount: 2, meetingCount: 1, turnCount: 6, seed: 31, namePrefix: "truth"), to: folder)
        let rttm = try String(contentsOf: folder.appendingPathComponent("reference.rttm"), encoding: .utf8)
        let uploaded = try server.request("PUT", "/v1/conversations/\(conversation)/references/truth", body: Array(rttm.utf8), contentType: "text/plain")
        #expect(uploaded.status == 200, "\(uploaded.text)")
        #expect((uploaded.json() as? [String: Any])?["speakers"] as? Int == 2)

        let (status, body) = try server.json("/v1/conversations/\(conversation)/compare?providers=energy&reference=truth")
        #expect(status == 200)
        let pair = try #require((body["pairs"] as? [[String: Any]])?.first)
        #expect(pair["reference"] as? String == "reference:truth" && pair["hypothesis"] as? String == "energy")
        let der = try #require(pair["der"] as? Double), evalDER = try #require(result["der_collar"] as? Double)
        let plain = try #require(pair["der_no_collar"] as? Double), evalPlain = try #require(result["der"] as? Double)
        // The report gives eval's figures to 4 decimals: equal to that precision.
        #expect(abs(der - evalDER) <= 5e-5, "compare \(der) vs eval \(evalDER)")
        #expect(abs(plain - evalPlain) <= 5e-5, "compare \(plain) vs eval \(evalPlain)")
        // And exactly what eval's scoring gives the same turns: the reference as eval read it, the
        // final turns the report lists, the synthesised UEM.
        let reference = try #require(try RTTM.parse(rttm).values.first)
        let finalTurns = (result["turns"] as? [[String: Any]] ?? []).compactMap { turn -> SpeakerSegment? in
            guard let speaker = turn["speaker"] as? String, let start = turn["start"] as? Double, let end = turn["end"] as? Double else { return nil }
            return SpeakerSegment(speaker: speaker, startSeconds: start, endSeconds: end)
        }
        let uem = try #require(try UEM.parse(String(contentsOf: folder.appendingPathComponent("reference.uem"), encoding: .utf8)).values.first)
        let evalScoring = DiarizationErrorRate.score(reference: reference, hypothesis: finalTurns, uem: uem, config: DERConfig(collarSeconds: 0.25))
        #expect(abs(der - evalScoring.errorRate) < 1e-9, "compare \(der) vs eval's scoring \(evalScoring.errorRate)")
        let agreement = try #require(pair["word_agreement"] as? Double)
        #expect((0...1).contains(agreement))
        #expect(pair["words_compared"] as? Int == result["word_count"] as? Int)
        let labellings = body["labellings"] as? [[String: Any]] ?? []
        #expect(labellings.first?["speakers"] as? Int == result["speakers_found"] as? Int)
        #expect(labellings.first?["real_time_factor"] is Double)
    }

    /// A device compares only its own conversations, and bad requests get a 4xx saying what is wrong.
    @Test func compareIsScopedAndRefusesBadRequests() async throws {
        let server = try TestServer()
        let tokenA = try SecurityEndToEndTests.token(server, device: "phone-a")
        let tokenB = try SecurityEndToEndTests.token(server, device: "phone-b")
        let started = try server.request("POST", "/v1/test-recordings", body: Array(#"{"provider":"energy","turns":3,"speed":8,"seed":37}"#.utf8), token: tokenA)
        let id = try #require((started.json() as? [String: Any])?["id"] as? String)
        var conversation: String?
        for _ in 0..<1200 {
            let report = try server.json("/v1/test-recordings/\(id)", token: tokenA).body
            if report["status"] as? String == "done" {
                conversation = (report["results"] as? [[String: Any]])?.first?["conversation_id"] as? String
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let id2 = try #require(conversation)
        let rttm = "SPEAKER x 1 0.000 2.000 <NA> <NA> a <NA> <NA>\nSPEAKER x 1 2.000 2.000 <NA> <NA> b <NA> <NA>\n"
        let code = SecurityEndToEndTests.code

        // Another device: as if the conversation did not exist.
        #expect(try server.request("GET", "/v1/conversations/\(id2)/compare?providers=energy", token: tokenB).status == 404)
        #expect(try server.request("PUT", "/v1/conversations/\(id2)/references/r", body: Array(rttm.utf8), token: tokenB).status == 404)
        // Its own device: refusals that name the problem.
        let one = try server.request("GET", "/v1/conversations/\(id2)/compare?providers=energy", token: tokenA)
        #expect(one.status == 400 && code(one) == "nothing_to_compare")
        let unknown = try server.request("GET", "/v1/conversations/\(id2)/compare?providers=energy,falcon", token: tokenA)
        #expect(unknown.status == 404 && code(unknown) == "labelling_not_found" && unknown.text.contains("energy"))
        let noReference = try server.request("GET", "/v1/conversations/\(id2)/compare?providers=energy&reference=nope", token: tokenA)
        #expect(noReference.status == 404 && code(noReference) == "reference_not_found")
        let garbage = try server.request("PUT", "/v1/conversations/\(id2)/references/r", body: Array("SPEAKER x 1 zero".utf8), token: tokenA)
        #expect(garbage.status == 400 && code(garbage) == "invalid_rttm")
        let badName = try server.request("PUT", "/v1/conversations/\(id2)/references/a%20b", body: Array(rttm.utf8), token: tokenA)
        #expect(badName.status == 400 && code(badName) == "invalid_parameter")
        // Uploaded, the reference makes a comparison with one provider possible.
        #expect(try server.request("PUT", "/v1/conversations/\(id2)/references/r", body: Array(rttm.utf8), token: tokenA).status == 200)
        let compared = try server.request("GET", "/v1/conversations/\(id2)/compare?providers=energy&reference=r", token: tokenA)
        #expect(compared.status == 200)
        #expect(((compared.json() as? [String: Any])?["pairs"] as? [Any])?.count == 1)

        // Deleting the conversation: only its own device may, and its labellings go with it.
        #expect(try server.request("DELETE", "/v1/conversations/\(id2)", token: tokenB).status == 404)
        #expect(try server.request("DELETE", "/v1/conversations/\(id2)", token: tokenA).status == 200)
        #expect(try server.request("GET", "/v1/conversations/\(id2)/labellings", token: tokenA).status == 404)
        #expect(try server.request("DELETE", "/v1/conversations/\(id2)", token: tokenA).status == 404)
        let connection = try PGConnection(connectionString: server.connectionString)
        for table in ["labellings", "labelling_words", "words", "speaker_turns"] {
            let left = try connection.query("SELECT count(*)::bigint AS n FROM \(table) WHERE conversation_id = $1", [id2]).rows[0].decode(Int.self, column: "n")
            #expect(left == 0, "\(table)")
        }
    }
}
