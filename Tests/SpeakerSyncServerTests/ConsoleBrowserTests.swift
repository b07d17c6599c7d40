import DiarizationScoring
import Foundation
import MeetingSynth
import SpeakerSyncAudio
import Testing
import SpeakerSyncClient
import TestSupport
@testable import SpeakerSyncServer

/// The console in a real browser (Debian's headless Chromium over WebDriver): a developer signs in,
/// flips a device's provider, runs a synthetic test recording, watches it live, and relabels the
/// stored conversation. Each step is checked both on the page and through the API behind it.
@Suite(.serialized) struct ConsoleBrowserTests {
    /// Where the screenshots go: SPEAKERSYNC_CONSOLE_SCREENSHOTS (docs/ uses them), else a temporary folder.
    static var screenshotFolder: URL {
        if let folder = ProcessInfo.processInfo.environment["SPEAKERSYNC_CONSOLE_SCREENSHOTS"] { return URL(fileURLWithPath: folder) }
        return FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-console-\(getpid())")
    }

    /// Saves a screenshot; Chromium's keep `name` (docs/ shows them), other browsers' get their name in front.
    static func save(_ browser: WebDriver, _ name: String) async throws {
        try FileManager.default.createDirectory(at: screenshotFolder, withIntermediateDirectories: true)
        let file = screenshotFolder.appendingPathComponent(browser.browser == .chromium ? name : "\(browser.browser)-\(name)")
        try await browser.screenshot().write(to: file)
        print("console screenshot: \(file.path)")
    }

    /// Opens the console and signs in with `key`: the page asks for a credential, then shows the tabs.
    static func signIn(_ browser: WebDriver, at http: String, key: String) async throws {
        try await browser.navigate(http + "/")
        #expect(await browser.waitFor("return !document.getElementById('signin').hidden", seconds: 30) != nil)
        try await browser.type("#signin-token", key)
        try await browser.click("#signin-form button")
        try #require(await browser.waitFor("return document.body.dataset.ready", seconds: 30) != nil, "the console did not sign in")
    }

    /// On the test tab: the microphone, streaming through `provider`.
    static func startMicrophone(_ browser: WebDriver, provider: String) async throws {
        try await browser.click("#tabs button[data-tab=test]")
        try #require(await browser.waitFor("return document.querySelector('#mic-provider option[value=\(provider)]')", seconds: 30) != nil)
        try await browser.execute("document.getElementById('mic-provider').value = '\(provider)'")
        try await browser.click("#mic-start")
    }

    /// The microphone session's protocol log, once it finalized: the start sent first, the server's
    /// answers, audio counted rather than listed, and a filter that keeps one type.
    static func checkProtocolLog(_ browser: WebDriver) async throws {
        // The stats follow the final transcript the status waited for.
        #expect(await browser.waitFor("return document.querySelector('#mic-protocol .log-entry[data-type=stats]')", seconds: 30) != nil)
        let logged = try await browser.execute("return [...document.querySelectorAll('#mic-protocol .log-entry')].map((e) => e.dataset.direction + ':' + e.dataset.type)") as? [String] ?? []
        #expect(logged.first == "sent:start", "\(logged.prefix(5))")
        for expected in ["received:session", "received:transcript", "received:stats", "sent:finalize"] {
            #expect(logged.contains(expected), "\(expected) is not in the log")
        }
        #expect(!logged.contains { $0.hasSuffix(":undefined") || $0.hasSuffix(":(no type)") })
        let audio = try await browser.execute("return document.querySelector('#mic-protocol .protocol-audio').textContent") as? String ?? ""
        #expect(audio.hasPrefix("audio sent: ") && !audio.hasPrefix("audio sent: 0 "), "\(audio)")
        try await browser.execute("""
            const filter = document.querySelector('#mic-protocol .protocol-filter');
            filter.value = 'session';
            filter.dispatchEvent(new Event('change'));
            """)
        let filtered = try await browser.execute("return [...document.querySelectorAll('#mic-protocol .log-entry')].map((e) => e.dataset.type)") as? [String] ?? []
        #expect(filtered == ["session"])
        try await browser.execute("""
            const filter = document.querySelector('#mic-protocol .protocol-filter');
            filter.value = '';
            filter.dispatchEvent(new Event('change'));
            """)
    }

    @Test(arguments: WebDriver.Browser.allCases)
    func aDeveloperFlipsAProviderRunsATestRecordingWatchesItLiveAndRenamesASpeaker(in browserKind: WebDriver.Browser) async throws {
        let server = try EndToEndTests.TestServer()
        let http = server.http
        let adminKey = server.adminKey
        /// GET as the admin: the API's view, to check the page against.
        func json(_ path: String) async throws -> [String: Any] {
            try await Blocking.run { SendableJSON(try SimpleHTTPClient.get(http + path, token: adminKey).json() as? [String: Any] ?? [:]) }.object
        }
        do {
            let browser = try await WebDriver.start(browserKind)
            // Signing in: the page asks for a credential, then shows the tabs.
            try await Self.signIn(browser, at: http, key: adminKey)

            // The provider toggle: device console-phone gets the energy baseline, stored on the server.
            try await browser.type("#device-id", "console-phone")
            try await browser.click("#device-load")
            try #require(await browser.waitFor("return document.querySelector('.card[data-provider=energy] button.use-provider:not([disabled])')", seconds: 30) != nil)
            try await browser.click(".card[data-provider=energy] button.use-provider")
            #expect(await browser.waitFor("return document.querySelector('.card.selected[data-provider=energy]')", seconds: 30) != nil)
            let settings = try await json("/v1/devices/console-phone/settings")
            #expect(settings["provider"] as? String == "energy")

            // A test recording through speakerkit, in real time so it can be watched live.
            try await browser.click("#tabs button[data-tab=test]")
            try await browser.execute("""
                for (const box of document.querySelectorAll('#test-providers input')) box.checked = box.value === 'speakerkit';
                document.getElementById('test-speakers').value = '2';
                document.getElementById('test-turns').value = '6';
                document.getElementById('test-seed').value = '11';
                document.getElementById('test-speed').value = '1';
                """)
            try await browser.click("#test-run")

            // While it streams: the live tab lists it and shows its transcript, figures and timeline.
            try #require(await browser.waitFor("return Number(document.getElementById('live-count').textContent) > 0", seconds: 120) != nil,
                         "no live session appeared")
            try await browser.click("#tabs button[data-tab=live]")
            try #require(await browser.waitFor("return document.querySelector('#live-table tr[data-conversation^=test-]')", seconds: 30) != nil)
            try await browser.click("#live-table tr[data-conversation^=test-] td")
            // The server's figures first, then the page's words: under CI's load (every suite at once on two
            // cores) a session's first words have taken over a minute to arrive, which is the machine, not
            // the page; once the figures count words, the transcript must show them on the next refresh.
            #expect(await browser.waitFor("return Number(document.querySelector('#live-metrics [data-metric=words] b')?.textContent) > 0", seconds: 240) != nil)
            #expect(await browser.waitFor("return document.querySelectorAll('#live-transcript .utterance .word').length", seconds: 30) != nil)
            #expect(await browser.waitFor("return document.querySelectorAll('#live-metrics .metric').length >= 6", seconds: 10) != nil)
            #expect(await browser.waitFor("return document.querySelectorAll('#live-timeline rect.turn').length", seconds: 30) != nil)
            let words = try await browser.execute("return document.querySelector('#live-metrics [data-metric=words] b').textContent") as? String
            #expect(Int(words ?? "") ?? 0 > 0)
            try await Self.save(browser, "console-live.png")

            // Back on the test tab: scores beside a timeline of truth against the result.
            try await browser.click("#tabs button[data-tab=test]")
            try #require(await browser.waitFor("return document.getElementById('test-status').dataset.status === 'done'", seconds: 300) != nil,
                         "the test recording did not finish")
            let row = try await browser.execute("""
                const row = document.querySelector('#test-results tr[data-provider=speakerkit]');
                return row ? [row.dataset.status, ...[...row.cells].map((c) => c.textContent)] : null;
                """) as? [String]
            let cells = try #require(row)
            #expect(cells[0] == "done")
            // The workbench: truth on top, the provider's lane under it, and the stored audio's waveform.
            let lanes = try await browser.execute("return [...document.querySelectorAll('#test-workbench g.lane')].map((g) => g.dataset.lane)") as? [String] ?? []
            #expect(lanes == ["reference", "speakerkit"])
            #expect((try await browser.execute("return document.querySelectorAll('#test-workbench rect.turn').length") as? Int ?? 0) >= 6)
            #expect(await browser.waitFor("return document.getElementById('test-workbench').dataset.waveform === 'drawn'", seconds: 60) != nil,
                    "the stored audio's waveform was not drawn")

            // The page shows what the API reports (not figures of its own).
            let reports = try await json("/v1/test-recordings")["test_recordings"] as? [[String: Any]] ?? []
            let result = try #require((reports.first?["results"] as? [[String: Any]])?.first)
            let der = try #require(result["der"] as? Double)
            #expect(cells[3] == String(format: "%.1f%%", der * 100))
            #expect(cells[6] == "\(result["speakers_found"] as? Int ?? -1) / 2")
            try await browser.execute("document.getElementById('test-status').scrollIntoView()")
            try await Self.save(browser, "console-test-recording.png")

            // The stored conversation: transcript, timeline, and a rename that reaches PostgreSQL.
            let conversationID = try #require(result["conversation_id"] as? String)
            try await browser.click("#tabs button[data-tab=conversations]")
            try #require(await browser.waitFor("return document.querySelector('#conversation-table tr[data-conversation=\"\(conversationID)\"]')", seconds: 30) != nil)
            try await browser.click("#conversation-table tr[data-conversation=\"\(conversationID)\"] td")
            try #require(await browser.waitFor("return document.querySelectorAll('#conversation-transcript .utterance').length", seconds: 30) != nil)
            #expect((try await browser.execute("return document.querySelectorAll('#conversation-timeline rect.turn').length") as? Int ?? 0) > 0)
            let label = try #require(try await browser.execute("return document.querySelector('#conversation-speakers .speaker-chip').dataset.label") as? String)
            try await browser.type("#conversation-speakers .speaker-chip input", "Alice")
            try await browser.click("#conversation-speakers .speaker-chip button")
            #expect(await browser.waitFor("return [...document.querySelectorAll('#conversation-transcript .who-said')].some((e) => e.textContent === 'Alice:')", seconds: 30) != nil)
            let stored = try await json("/v1/conversations/\(conversationID)")["speakers"] as? [[String: Any]] ?? []
            #expect(stored.contains { $0["label"] as? String == label && $0["name"] as? String == "Alice" })
            // The list's preview follows the rename.
            #expect(await browser.waitFor("return document.querySelector('#conversation-table tr[data-conversation=\"\(conversationID)\"] .conversation-preview').textContent.includes('Alice:')", seconds: 30) != nil)
            try await Self.save(browser, "console-conversation.png")

            // Side by side: with the truth uploaded as a reference, the conversation shows the scores of
            // the pair, both timelines and both transcripts, the page's DER being the API's.
            let truthTurns = (reports.first?["truth"] as? [String: Any])?["turns"] as? [[String: Any]] ?? []
            let rttm = truthTurns.map { turn in
                let start = turn["start"] as? Double ?? 0, end = turn["end"] as? Double ?? 0
                return "SPEAKER truth 1 \(String(format: "%.3f", start)) \(String(format: "%.3f", end - start)) <NA> <NA> \(turn["speaker"] as? String ?? "?") <NA> <NA>"
            }.joined(separator: "\n")
            let uploaded = try await Blocking.run {
                try SimpleHTTPClient.request(method: "PUT", url: http + "/v1/conversations/\(conversationID)/references/truth",
                                             body: Array(rttm.utf8), contentType: "text/plain", token: adminKey).status
            }
            #expect(uploaded == 200)
            try await browser.click("#conversation-table tr[data-conversation=\"\(conversationID)\"] td")
            try #require(await browser.waitFor("return !document.getElementById('conversation-compare').hidden && document.querySelector('#compare-pairs tbody tr')", seconds: 30) != nil,
                         "the comparison did not appear")
            let pageDER = try await browser.execute("return document.querySelector('#compare-pairs tbody tr').cells[1].textContent") as? String
            let compared = try await json("/v1/conversations/\(conversationID)/compare?providers=speakerkit&reference=truth")
            let apiDER = try #require((compared["pairs"] as? [[String: Any]])?.first?["der"] as? Double)
            #expect(pageDER == String(format: "%.1f%%", apiDER * 100))
            #expect((try await browser.execute("return document.querySelectorAll('#compare-left-transcript .word').length") as? Int ?? 0) > 0)
            #expect((try await browser.execute("return document.querySelectorAll('#compare-right-transcript .word').length") as? Int ?? 0) > 0)
            let compareLanes = try await browser.execute("return [...document.querySelectorAll('#compare-timeline text')].map((t) => t.textContent)") as? [String] ?? []
            #expect(compareLanes.contains { $0.hasPrefix("reference:truth") } && compareLanes.contains { $0.hasPrefix("speakerkit") })
            try await browser.execute("document.getElementById('conversation-compare').scrollIntoView()")
            try await Self.save(browser, "console-compare.png")

            // The test recording kept its audio: the page plays it and re-diarizes it with energy,
            // which then appears among the labellings to compare.
            try #require(await browser.waitFor("return !document.getElementById('conversation-audio').hidden && document.getElementById('conversation-player').src.startsWith('blob:')", seconds: 30) != nil,
                         "the stored audio did not load")
            #expect(await browser.waitFor("return document.getElementById('conversation-player').duration > 1", seconds: 30) != nil, "the player cannot read the audio")
            try await browser.execute("document.getElementById('rediarize-provider').value = 'energy'")
            try await browser.click("#rediarize-start")
            #expect(await browser.waitFor("return document.getElementById('rediarize-status').dataset.status === 'done'", seconds: 120) != nil,
                    "the re-diarization did not finish")
            #expect(await browser.waitFor("return [...document.getElementById('compare-right').options].some((o) => o.value === 'energy:rediarized')", seconds: 30) != nil)
            let names = (try await json("/v1/conversations/\(conversationID)/labellings"))["labellings"] as? [[String: Any]] ?? []
            #expect(names.contains { $0["name"] as? String == "energy:rediarized" && $0["source"] as? String == "rediarized" })

            // The list: the conversation's row has its opening words, its word count, and badges for its
            // stored audio, its reference and its re-diarization; search finds it by a word it holds.
            try await browser.execute("window.scrollTo(0, 0)")
            let listRow = "#conversation-table tr[data-conversation=\"\(conversationID)\"]"
            #expect(await browser.waitFor("""
                const row = document.querySelector('\(listRow)');
                return row && ['audio', 'reference', 'rediarized'].every((b) => row.querySelector(`[data-badge=${b}]`));
                """, seconds: 30) != nil, "the row's badges did not appear")
            let summary = try await json("/v1/conversations/\(conversationID)")
            let rowCells = try await browser.execute("return [...document.querySelector('\(listRow)').cells].map((c) => c.textContent)") as? [String] ?? []
            #expect(rowCells.count == 8 && rowCells[4].hasPrefix("\(summary["word_count"] as? Int ?? -1)"))
            let text = try await Blocking.run { try SimpleHTTPClient.get(http + "/v1/conversations/\(conversationID)/transcript?format=text", token: adminKey).text }
            let firstWord = try #require(text.split(separator: ":").dropFirst().first?.split(separator: " ").first.map(String.init))
            let preview = try await browser.execute("return document.querySelector('\(listRow) .conversation-preview').textContent") as? String ?? ""
            #expect(preview.contains(firstWord), "\(preview)")
            try await browser.type("#conversation-search", firstWord)
            #expect(await browser.waitFor("return document.querySelector('\(listRow)')", seconds: 5) != nil)
            try await browser.click("#conversation-with-audio")
            #expect(await browser.waitFor("return document.querySelector('\(listRow)')", seconds: 5) != nil)
            try await Self.save(browser, "console-conversations.png")
            try await browser.type("#conversation-search", "no-such-words-anywhere")
            #expect(await browser.waitFor("return document.querySelectorAll('#conversation-table tbody tr').length === 0", seconds: 5) != nil)
        }
    }

    /// The workbench with your own recording: a synthetic meeting's WAV and its exact RTTM (made here,
    /// so the reference is the truth) are chosen in the page, which decodes the audio, draws its
    /// waveform and uploads it as 16 kHz WAV with the RTTM; two providers stream it, and the page shows
    /// the reference lane over one lane per provider with its errors coloured, the DER the API reports.
    @Test(arguments: WebDriver.Browser.allCases)
    func aDeveloperUploadsARecordingWithItsRTTMAndComparesTwoProvidersOnTheWorkbench(in browserKind: WebDriver.Browser) async throws {
        // Seed 19: not among the other tests' meetings.
        let script = try MeetingScript.generate(seed: 19, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer(config: MeetingSetConfig.defaultSynth).synthesize(script, seed: 19)
        let rttm = meeting.rttm(fileID: "meeting")
        let reference = try RTTM.parse(rttm)["meeting"] ?? []
        let server = try EndToEndTests.TestServer()
        let http = server.http
        let adminKey = server.adminKey
        let browser = try await WebDriver.start(browserKind)
        try await Self.signIn(browser, at: http, key: adminKey)
        try await browser.click("#tabs button[data-tab=test]")
        try #require(await browser.waitFor("return document.querySelector('#test-providers input[value=energy]')", seconds: 30) != nil)
        // The files as a person would drop them on the inputs (a DataTransfer is what drag and drop fills).
        try await browser.execute("""
            for (const box of document.querySelectorAll('#test-providers input')) box.checked = ['energy', 'speakerkit'].includes(box.value);
            document.getElementById('test-speed').value = '8';
            const put = (id, file) => {
              const transfer = new DataTransfer();
              transfer.items.add(file);
              const input = document.getElementById(id);
              input.files = transfer.files;
              input.dispatchEvent(new Event('change'));
            };
            const wav = Uint8Array.from(atob(arguments[0]), (c) => c.charCodeAt(0));
            put('upload-audio', new File([wav], 'meeting.wav', { type: 'audio/wav' }));
            put('upload-rttm', new File([arguments[1]], 'meeting.rttm', { type: 'text/plain' }));
            """, [meeting.wavData().base64EncodedString(), rttm])
        try #require(await browser.waitFor("return document.getElementById('upload-note').dataset.state === 'ready'", seconds: 30) != nil,
                     "the page did not decode the WAV")
        try await browser.click("#upload-run")
        try #require(await browser.waitFor("return ['done', 'failed', 'refused'].includes(document.getElementById('test-status').dataset.status)", seconds: 300) != nil,
                     "the uploaded recording did not finish")
        let status = try await browser.execute("return document.getElementById('test-status').textContent") as? String ?? ""
        try #require(try await browser.execute("return document.getElementById('test-status').dataset.status") as? String == "done", "\(status)")

        // The API's report: an upload, scored against the RTTM; its DER is that of its own turns.
        let reports = try await Blocking.run {
            SendableJSON(try SimpleHTTPClient.get(http + "/v1/test-recordings", token: adminKey).json() as? [String: Any] ?? [:])
        }.object["test_recordings"] as? [[String: Any]] ?? []
        let report = try #require(reports.first)
        #expect(report["source"] as? String == "upload")
        let results = report["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["provider"] as? String } == ["energy", "speakerkit"])
        let seconds = try #require(report["audio_seconds"] as? Double)
        #expect(abs(seconds - meeting.durationSeconds) < 0.05, "sent as 16 kHz WAV of the same length")
        for result in results {
            let provider = result["provider"] as? String ?? ""
            let turns = (result["turns"] as? [[String: Any]] ?? []).map {
                SpeakerSegment(speaker: $0["speaker"] as? String ?? "", startSeconds: $0["start"] as? Double ?? 0, endSeconds: $0["end"] as? Double ?? 0)
            }
            let der = try #require(result["der"] as? Double, "\(provider) has no DER")
            let recomputed = DiarizationScoring.DiarizationErrorRate.score(reference: reference, hypothesis: turns,
                                                                           uem: [TimeSpan(startSeconds: 0, endSeconds: seconds)]).errorRate
            #expect(abs(der - recomputed) < 0.002, "\(provider): \(der) against \(recomputed)")
            // The page shows the API's DER, in the table and in the lane's title.
            let cells = try await browser.execute("return [...document.querySelector('#test-results tr[data-provider=\(provider)]').cells].map((c) => c.textContent)") as? [String] ?? []
            #expect(cells.count > 2 && cells[2] == String(format: "%.1f%%", der * 100))
            let subtitle = try await browser.execute("return document.querySelector('#test-workbench g.lane[data-lane=\(provider)] .lane-subtitle').textContent") as? String
            #expect(subtitle == String(format: "DER %.1f%%", der * 100))
            let pageTurns = try await browser.execute("return document.querySelectorAll('#test-workbench g.lane[data-lane=\(provider)] rect.turn').length") as? Int ?? 0
            #expect(pageTurns == turns.count)
            // Every error region the API reports is drawn in the provider's lane, in its kind.
            let errors = result["errors"] as? [[String: Any]] ?? []
            let drawn = try await browser.execute("return [...document.querySelectorAll('#test-workbench g.lane[data-lane=\(provider)] rect.error')].map((r) => r.dataset.kind)") as? [String] ?? []
            #expect(drawn == errors.map { $0["kind"] as? String ?? "" })
        }
        // The reference lane on top, then one lane per provider; errors coloured, with a legend of their kinds.
        let lanes = try await browser.execute("return [...document.querySelectorAll('#test-workbench g.lane')].map((g) => g.dataset.lane)") as? [String] ?? []
        #expect(lanes == ["reference", "energy", "speakerkit"])
        #expect((try await browser.execute("return document.querySelectorAll('#test-workbench g.lane[data-lane=reference] rect.turn').length") as? Int) == reference.count)
        #expect((try await browser.execute("return document.querySelectorAll('#test-workbench rect.error').length") as? Int ?? 0) > 0,
                "neither provider made an error to colour")
        let legend = try await browser.execute("return [...document.querySelectorAll('#test-workbench .workbench-legend [data-kind]')].map((e) => e.dataset.kind)") as? [String] ?? []
        #expect(legend == ["missed", "false_alarm", "confusion"])

        // The waveform of the chosen file, a player of it, and a click on the lanes seeks there.
        #expect(try await browser.execute("return document.getElementById('test-workbench').dataset.waveform") as? String == "drawn")
        #expect(await browser.waitFor("return document.querySelector('#test-workbench audio').duration > 1", seconds: 30) != nil, "the player cannot read the file")
        try await browser.click("#test-workbench .workbench-lanes svg")
        let position = try #require(await browser.waitFor("""
            const position = Number(document.getElementById('test-workbench').dataset.position);
            return position > 0 ? position : null;
            """, seconds: 10) as? NSNumber, "a click on the lanes did not seek").doubleValue
        let playerTime = (try await browser.execute("return document.querySelector('#test-workbench audio').currentTime") as? NSNumber)?.doubleValue ?? -1
        #expect(abs(playerTime - position) < 0.5, "the player is at \(playerTime) s, the playhead at \(position)")
        #expect(abs(position - seconds / 2) < seconds / 4, "the middle of the lanes is the middle of the recording")
        try await browser.execute("document.querySelector('#test-form .sources').scrollIntoView()")
        try await Self.save(browser, "console-workbench.png")
    }

    /// The microphone path: the page captures audio (Chromium's fake microphone playing a synthetic
    /// meeting, the same voices and synth defaults as `speakersync synth`), streams it as pcm_s16le at the
    /// AudioContext's rate with `"asr":"server"`, and shows the words the server recognised, each with
    /// a speaker; stopping finalizes, and the page's words are the stored conversation's.
    @Test func theMicrophoneStreamsAndTheServerRecognisesAndLabelsTheWords() async throws {
        // Seed 13: not among the recogniser's development seeds (1–5), its reported seeds (101–105) or
        // the other tests' meetings.
        let script = try MeetingScript.generate(seed: 13, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer(config: MeetingSetConfig.defaultSynth).synthesize(script, seed: 13)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-mic-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("meeting.wav")
        try WAVWriter.write(AudioBuffer(samples: meeting.audio, sampleRate: meeting.sampleRate), to: wav)

        let server = try EndToEndTests.TestServer()
        let http = server.http
        let adminKey = server.adminKey
        let browser = try await WebDriver.start(microphoneWAV: wav)
        try await Self.signIn(browser, at: http, key: adminKey)
        try await Self.startMicrophone(browser, provider: "speakerkit")
        try #require(await browser.waitFor("return document.getElementById('mic-status').textContent.startsWith('recording')", seconds: 30) != nil,
                     "the microphone session did not start")

        // Words arrive while the meeting plays (the recogniser closes an utterance at each pause).
        try #require(await browser.waitFor("return document.querySelectorAll('#mic-transcript .word').length", seconds: meeting.durationSeconds + 30) != nil,
                     "no recognised words reached the page")
        // Let the meeting play to its end (the fake microphone then starts it again), then stop.
        _ = await browser.waitFor("return false", seconds: max(0, meeting.durationSeconds - 5))
        try await browser.click("#mic-stop")
        let finalized = try #require(await browser.waitFor("""
            const status = document.getElementById('mic-status').textContent;
            return status.startsWith('finalized') ? status : null;
            """, seconds: 60) as? String, "the microphone session did not finalize")
        try await Self.save(browser, "console-microphone.png")
        try await Self.checkProtocolLog(browser)
        try await browser.execute("document.getElementById('mic-protocol').scrollIntoView()")
        try await Self.save(browser, "console-protocol.png")
        let conversationID = try #require(finalized.split(separator: " ").last.map(String.init))
        let pageWords = try await browser.execute("return document.querySelectorAll('#mic-transcript .word').length") as? Int ?? 0

        let transcript = try await Blocking.run {
            SendableJSON(try SimpleHTTPClient.get(http + "/v1/conversations/\(conversationID)/transcript", token: adminKey).json() as? [String: Any] ?? [:])
        }.object
        let words = (transcript["utterances"] as? [[String: Any]] ?? []).flatMap { $0["words"] as? [[String: Any]] ?? [] }
        #expect(!words.isEmpty)
        #expect(words.count == pageWords)
        #expect(words.allSatisfy { $0["speaker"] is String }, "a recognised word was stored without a speaker")
    }

    /// The microphone path in Firefox, whose fake microphone is a tone (it cannot play a file): the
    /// page's capture, AudioWorklet and PCM stream must work there too, so the session starts at the
    /// AudioContext's rate, runs, and finalizes into a stored conversation at that rate.
    @Test func theMicrophoneSessionStartsAndFinalizesInFirefox() async throws {
        let server = try EndToEndTests.TestServer()
        let http = server.http
        let adminKey = server.adminKey
        let browser = try await WebDriver.start(.firefox)
        try await Self.signIn(browser, at: http, key: adminKey)
        try await Self.startMicrophone(browser, provider: "speakerkit")
        let recording = await browser.waitFor("""
            const status = document.getElementById('mic-status').textContent;
            return status.startsWith('recording') ? status : null;
            """, seconds: 30) as? String
        let status = try await browser.execute("return document.getElementById('mic-status').textContent") as? String
        try #require(recording != nil, "the microphone session did not start: \(status ?? "")")
        _ = await browser.waitFor("return false", seconds: 3)
        try await browser.click("#mic-stop")
        let finalized = try #require(await browser.waitFor("""
            const status = document.getElementById('mic-status').textContent;
            return status.startsWith('finalized') ? status : null;
            """, seconds: 60) as? String, "the microphone session did not finalize")
        try await Self.checkProtocolLog(browser)
        let conversationID = try #require(finalized.split(separator: " ").last.map(String.init))
        let rate = try await browser.execute("return document.getElementById('mic-status').dataset.sampleRate") as? String
        let conversation = try await Blocking.run {
            SendableJSON(try SimpleHTTPClient.get(http + "/v1/conversations/\(conversationID)", token: adminKey).json() as? [String: Any] ?? [:])
        }.object
        #expect(conversation["status"] as? String == "finalized")
        #expect((conversation["sample_rate"] as? Int).map(String.init) == rate)
        #expect((conversation["audio_seconds"] as? Double ?? 0) > 1, "the stream carried no audio")
    }
}

private struct SendableJSON: @unchecked Sendable {
    let object: [String: Any]
    init(_ object: [String: Any]) { self.object = object }
}
