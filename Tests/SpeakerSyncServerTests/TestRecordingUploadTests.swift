import DiarizationScoring
import Foundation
import MeetingSynth
import SpeakerSyncAudio
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// A test recording of an uploaded WAV with its RTTM (the console's "Your own recording"): the
/// multipart body, its checks, the error regions drawn in the console, and a real run through two
/// providers scored against the RTTM.
@Suite(.serialized) struct TestRecordingUploadTests {
    typealias TestServer = EndToEndTests.TestServer
    typealias Security = SecurityEndToEndTests

    /// A multipart/form-data body as a browser's FormData writes it.
    struct Form {
        static let boundary = "----speakersync-test-7f3a"
        var body: [UInt8] = []
        var contentType: String { "multipart/form-data; boundary=\(Self.boundary)" }

        mutating func field(_ name: String, _ value: String) {
            body += Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }

        mutating func file(_ name: String, _ fileName: String, type: String, _ bytes: [UInt8]) {
            // A quote in the name is escaped as curl does (a browser writes %22).
            let quoted = fileName.replacingOccurrences(of: "\"", with: "\\\"")
            body += Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(quoted)\"\r\nContent-Type: \(type)\r\n\r\n".utf8)
            body += bytes + Array("\r\n".utf8)
        }

        func closed() -> [UInt8] { body + Array("--\(Self.boundary)--\r\n".utf8) }
    }

    /// A 2-speaker synthetic meeting (seed 17: not among other tests' seeds) as a WAV and its exact RTTM.
    static func meeting(turns: Int = 4) throws -> (wav: [UInt8], rttm: String, reference: [SpeakerSegment], seconds: Double) {
        let script = try MeetingScript.generate(seed: 17, speakerCount: 2, turnCount: turns)
        let meeting = try MeetingSynthesizer(config: MeetingSetConfig.defaultSynth).synthesize(script, seed: 17)
        let rttm = meeting.rttm(fileID: "meeting")
        return (Array(meeting.wavData()), rttm, try RTTM.parse(rttm)["meeting"] ?? [], meeting.durationSeconds)
    }

    // MARK: The body

    @Test func aFormIsReadPartByPartWithItsNamesFileNamesAndTypes() throws {
        var form = Form()
        form.field("providers", "energy,speakerkit")
        form.file("audio", "my \"meeting\".wav", type: "audio/wav", [0, 1, 13, 10, 45, 45, 2])
        form.file("rttm", "", type: "application/octet-stream", [])
        let boundary = try #require(MultipartForm.boundary(contentType: form.contentType))
        let parsed = try MultipartForm.parse(form.closed(), boundary: boundary)
        #expect(parsed.parts.map(\.name) == ["providers", "audio", "rttm"])
        #expect(Array(parsed.parts[0].body) == Array("energy,speakerkit".utf8))
        // CR LF and dashes inside a file are data, not a boundary.
        #expect(Array(parsed.parts[1].body) == [0, 1, 13, 10, 45, 45, 2])
        #expect(parsed.parts[1].fileName == "my \"meeting\".wav" && parsed.parts[1].contentType == "audio/wav")
        #expect(parsed.parts[2].body.isEmpty)
        #expect(MultipartForm.boundary(contentType: "multipart/form-data; boundary=\"quoted b\"") == "quoted b")
        #expect(MultipartForm.boundary(contentType: "application/json") == nil)
    }

    @Test(arguments: [
        "no boundary at all",
        "--\(Form.boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nnever closed",
        "--\(Form.boundary)\r\nContent-Disposition: form-data\r\n\r\nx\r\n--\(Form.boundary)--",
        "--\(Form.boundary)\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--\(Form.boundary)--",
        "--\(Form.boundary)\r\nno colon here\r\n\r\nx\r\n--\(Form.boundary)--",
        "--\(Form.boundary)\r\nContent-Disposition: form-data; name=\"a\"",
        "--\(Form.boundary)garbage\r\n",
    ])
    func aMalformedFormIsRefusedNotCrashedOn(body: String) {
        do {
            _ = try MultipartForm.parse(Array(body.utf8), boundary: Form.boundary)
            Issue.record("accepted: \(body)")
        } catch {
            #expect(error.status == 400 && error.code == "invalid_body", "\(error)")
        }
    }

    @Test func theFormIsCheckedBeforeAnythingRuns() throws {
        let (wav, rttm, _, _) = try Self.meeting(turns: 2)
        let known: Set<String> = ["energy", "speakerkit", "device"]
        let phone = Principal.device(deviceID: "phone-a", tokenID: "t")
        func refusal(_ build: (inout Form) -> Void, as principal: Principal = .admin(keyID: "k")) -> String? {
            var form = Form()
            build(&form)
            do {
                _ = try UploadedRecording.parse(form.closed(), boundary: Form.boundary, principal: principal, knownProviders: known,
                                                defaultProvider: "energy")
                return nil
            } catch {
                return "\(error.status) \(error.code)"
            }
        }
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav) } == nil)
        #expect(refusal { $0.field("providers", "energy") } == "400 missing_parameter")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", Array("not a wav at all".utf8)) } == "400 invalid_audio")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", Array(wav.prefix(60))) } == "400 invalid_audio")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav); $0.file("rttm", "r.rttm", type: "text/plain", Array("SPEAKER x 1 oops".utf8)) } == "400 invalid_rttm")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav); $0.file("rttm", "r.rttm", type: "text/plain", [0xff, 0xfe]) } == "400 invalid_rttm")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav); $0.file("rttm", "r.rttm", type: "text/plain", Array("SPEAKER x 1 900.0 1.0 <NA> <NA> A <NA> <NA>\n".utf8)) } == "400 invalid_rttm")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav); $0.field("speakers", "3") } == "400 invalid_parameter")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav); $0.field("speed", "fast") } == "400 invalid_parameter")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav); $0.field("providers", "nope") } == "400 unknown_provider")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav); $0.field("asr", "maybe") } == "400 invalid_parameter")
        #expect(refusal { $0.file("audio", "a.wav", type: "audio/wav", wav); $0.field("providers", "device") } == "400 invalid_parameter")
        #expect(refusal({ $0.file("audio", "a.wav", type: "audio/wav", wav); $0.field("device_id", "phone-b") }, as: phone) == "403 device_mismatch")

        var form = Form()
        form.field("providers", "energy")
        form.field("providers", "speakerkit, energy")
        form.field("speed", "4")
        form.file("audio", "meeting\u{7}.wav", type: "audio/wav", wav)
        form.file("rttm", "meeting.rttm", type: "text/plain", Array(rttm.utf8))
        let (request, upload) = try UploadedRecording.parse(form.closed(), boundary: Form.boundary, principal: phone, knownProviders: known,
                                                            defaultProvider: nil)
        #expect(request.providers == ["energy", "speakerkit"] && request.speed == 4 && request.deviceID == "phone-a")
        #expect(request.upload?.fileName == "meeting.wav" && request.upload?.referenceSpeakerCount == 2 && request.upload?.serverWords == false)
        #expect(upload.reference?.isEmpty == false && upload.audio.sampleRate == request.upload?.sampleRate)
    }

    // MARK: Error regions

    @Test func errorRegionsAddUpToTheDERTheyExplain() {
        let reference = [
            SpeakerSegment(speaker: "A", startSeconds: 0, endSeconds: 4), SpeakerSegment(speaker: "B", startSeconds: 3, endSeconds: 8),
            SpeakerSegment(speaker: "A", startSeconds: 9, endSeconds: 12),
        ]
        let hypothesis = [
            SpeakerSegment(speaker: "s1", startSeconds: 0.5, endSeconds: 5), SpeakerSegment(speaker: "s2", startSeconds: 5, endSeconds: 7),
            SpeakerSegment(speaker: "s2", startSeconds: 9, endSeconds: 10), SpeakerSegment(speaker: "s3", startSeconds: 10, endSeconds: 13),
        ]
        let uem = [TimeSpan(startSeconds: 0, endSeconds: 12.5)]
        let der = DiarizationErrorRate.score(reference: reference, hypothesis: hypothesis, uem: uem)
        let regions = ErrorRegions.compute(reference: reference, hypothesis: hypothesis, uem: uem, mapping: der.mapping)
        let seconds = ErrorRegions.seconds(regions)
        #expect(abs((seconds[.missed] ?? 0) - der.missedSeconds) < 1e-9, "\(regions)")
        #expect(abs((seconds[.falseAlarm] ?? 0) - der.falseAlarmSeconds) < 1e-9, "\(regions)")
        #expect(abs((seconds[.confusion] ?? 0) - der.confusionSeconds) < 1e-9, "\(regions)")
        // 0–0.5 s nobody in the hypothesis talks; 3–4 s A and B overlap and only s1 talks.
        #expect(regions.contains(ErrorRegion(kind: .missed, startSeconds: 0, endSeconds: 0.5, speakers: 1)))
        #expect(regions.contains(ErrorRegion(kind: .missed, startSeconds: 3, endSeconds: 4, speakers: 1)))
        #expect(regions.allSatisfy { $0.endSeconds <= 12.5 })
    }

    // MARK: Through a real server

    @Test func anUploadedWAVWithItsRTTMStreamsThroughTwoProvidersAndIsScoredAgainstIt() async throws {
        let server = try TestServer()
        let tokenA = try Security.token(server, device: "phone-a")
        let tokenB = try Security.token(server, device: "phone-b")
        let (wav, rttm, reference, seconds) = try Self.meeting()
        var form = Form()
        form.field("providers", "energy,speakerkit")
        form.field("speed", "8")
        form.file("audio", "meeting.wav", type: "audio/wav", wav)
        form.file("rttm", "meeting.rttm", type: "text/plain", Array(rttm.utf8))
        let started = try server.request("POST", "/v1/test-recordings", body: form.closed(), contentType: form.contentType, token: tokenA)
        #expect(started.status == 202, "\(started.text)")
        let report = try #require(started.json() as? [String: Any])
        let id = try #require(report["id"] as? String)
        #expect(report["source"] as? String == "upload")
        let request = try #require(report["request"] as? [String: Any])
        #expect(request["device_id"] as? String == "phone-a" && request["file_name"] as? String == "meeting.wav")
        #expect((request["reference"] as? [String: Any])?["speakers"] as? Int == 2)
        #expect(try server.request("GET", "/v1/test-recordings/\(id)", token: tokenB).status == 404)

        var finished: [String: Any] = [:]
        for _ in 0..<1800 {
            finished = try server.json("/v1/test-recordings/\(id)", token: tokenA).body
            if ["done", "failed"].contains(finished["status"] as? String) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(finished["status"] as? String == "done", "\(finished)")
        #expect(abs((finished["audio_seconds"] as? Double ?? 0) - seconds) < 0.01)
        let truth = try #require(finished["truth"] as? [String: Any])
        #expect((truth["turns"] as? [Any])?.count == reference.count && truth["word_count"] is NSNull)
        let results = try #require(finished["results"] as? [[String: Any]])
        #expect(results.map { $0["provider"] as? String } == ["energy", "speakerkit"])
        for result in results {
            #expect(result["status"] as? String == "done", "\(result)")
            // The report's DER is the DER of its own turns against the RTTM.
            let turns = (result["turns"] as? [[String: Any]] ?? []).map {
                SpeakerSegment(speaker: $0["speaker"] as? String ?? "", startSeconds: $0["start"] as? Double ?? 0, endSeconds: $0["end"] as? Double ?? 0)
            }
            let der = DiarizationErrorRate.score(reference: reference, hypothesis: turns, uem: [TimeSpan(startSeconds: 0, endSeconds: seconds)])
            let reported = try #require(result["der"] as? Double)
            #expect(abs(reported - der.errorRate) < 0.002, "\(result["provider"] ?? ""): \(reported) vs \(der.errorRate)")
            #expect(result["speakers_reference"] as? Int == 2)
            #expect(result["wder"] is NSNull, "no words were recognised, so none were scored")
            // The regions drawn in the console add up to the reported error seconds.
            let errors = result["errors"] as? [[String: Any]] ?? []
            let parts = try #require(result["der_seconds"] as? [String: Double])
            for kind in ["missed", "false_alarm", "confusion"] {
                let drawn = errors.filter { $0["kind"] as? String == kind }
                    .reduce(0.0) { $0 + (($1["end"] as? Double ?? 0) - ($1["start"] as? Double ?? 0)) * Double($1["speakers"] as? Int ?? 1) }
                #expect(abs(drawn - (parts[kind] ?? -1)) < 0.01 * Double(max(1, errors.count)), "\(kind)")
            }
            #expect(result["speaker_mapping"] is [String: String])
            // Stored as the caller's device, with its audio.
            let conversation = try #require(result["conversation_id"] as? String)
            #expect(try server.json("/v1/conversations/\(conversation)", token: tokenA).body["device_id"] as? String == "phone-a")
            #expect(try server.request("GET", "/v1/conversations/\(conversation)/audio?format=wav", token: tokenA).status == 200)
        }
    }

    @Test func withServerASRAnUploadsRecognisedWordsAreScoredAgainstTheRTTMsSpeakers() async throws {
        let server = try TestServer()
        let (wav, rttm, _, _) = try Self.meeting()
        var form = Form()
        form.field("provider", "energy")
        form.field("speed", "4")
        form.field("asr", "server")
        form.file("audio", "meeting.wav", type: "audio/wav", wav)
        form.file("rttm", "meeting.rttm", type: "text/plain", Array(rttm.utf8))
        let started = try server.request("POST", "/v1/test-recordings", body: form.closed(), contentType: form.contentType)
        #expect(started.status == 202, "\(started.text)")
        let id = try #require((started.json() as? [String: Any])?["id"] as? String)
        var finished: [String: Any] = [:]
        for _ in 0..<1800 {
            finished = try server.json("/v1/test-recordings/\(id)").body
            if ["done", "failed"].contains(finished["status"] as? String) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(finished["status"] as? String == "done", "\(finished)")
        #expect((finished["request"] as? [String: Any])?["asr"] as? String == "server")
        let result = try #require((finished["results"] as? [[String: Any]])?.first)
        #expect((result["word_count"] as? Int ?? 0) > 0, "the server recognised no words")
        let wder = try #require(result["wder"] as? Double, "recognised words are scored")
        #expect((0...1).contains(wder))
    }

    @Test func anUploadIsRefusedWithAClearErrorAndTheBodyLimitHolds() throws {
        let server = try TestServer { $0.maxHTTPBodyBytes = 64 * 1024 }
        let (wav, _, _, _) = try Self.meeting(turns: 2)
        var form = Form()
        form.file("audio", "meeting.wav", type: "audio/wav", wav)
        let tooLarge = try server.request("POST", "/v1/test-recordings", body: form.closed(), contentType: form.contentType)
        #expect(tooLarge.status == 413 && Security.code(tooLarge) == "body_too_large")
        var bad = Form()
        bad.file("audio", "meeting.wav", type: "audio/wav", Array("RIFF....WAVEjunk".utf8))
        let refused = try server.request("POST", "/v1/test-recordings", body: bad.closed(), contentType: bad.contentType)
        #expect(refused.status == 400 && Security.code(refused) == "invalid_audio")
        #expect((refused.json() as? [String: Any])?["error"] is [String: Any])
        // Nothing was started by either.
        #expect(try server.json("/v1/test-recordings").body["test_recordings"].map { ($0 as? [Any])?.count } == 0)
    }
}
