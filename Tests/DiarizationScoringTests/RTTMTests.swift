import DiarizationScoring
import Testing

@Suite struct RTTMTests {
    @Test func parsesSpeakerLinesKeyedByFileAndSkipsOtherRecords() throws {
        let text = """
        ;; a comment
        SPKR-INFO f1 1 <NA> <NA> <NA> unknown alice <NA> <NA>
        SPEAKER f1 1 0.500 1.250 <NA> <NA> alice <NA> <NA>

        SPEAKER f2 1 3.000 0.000 <NA> <NA> bob <NA> <NA>\r
        SPEAKER\tf1\t1\t2.000\t1.000\t<NA>\t<NA>\tbob\t<NA>\t<NA>
        """
        let files = try RTTM.parse(text)
        #expect(files["f1"] == [
            SpeakerSegment(speaker: "alice", startSeconds: 0.5, endSeconds: 1.75),
            SpeakerSegment(speaker: "bob", startSeconds: 2, endSeconds: 3),
        ])
        #expect(files["f2"] == [SpeakerSegment(speaker: "bob", startSeconds: 3, endSeconds: 3)])
    }

    @Test func errorsNameTheLineAndTheField() {
        #expect(throws: ScoringError(.invalidNumber, line: 2, field: "tdur", "'x' is not a finite number of seconds")) {
            try RTTM.parse("SPEAKER f 1 0 1 <NA> <NA> a <NA> <NA>\nSPEAKER f 1 0 x <NA> <NA> a <NA> <NA>")
        }
        do {
            _ = try RTTM.parse("\n\nSPEAKER f 1 0.5")
            Issue.record("a short line must not parse")
        } catch {
            #expect(error.code == .missingField)
            #expect(error.lineNumber == 3)
            #expect(error.field == "tdur")
            #expect(error.message.contains("line 3"))
        }
        do {
            _ = try RTTM.parse("SPEAKER f 1 -1 2 <NA> <NA> a <NA> <NA>")
            Issue.record("a negative start must not parse")
        } catch {
            #expect(error.code == .invalidInterval)
            #expect(error.field == "tbeg")
        }
    }

    @Test func renderRoundTripsAtMillisecondPrecision() throws {
        let segments = [
            SpeakerSegment(speaker: "spk one", startSeconds: 0.0004, endSeconds: 1.2346),
            SpeakerSegment(speaker: "B", startSeconds: 12.5, endSeconds: 14),
        ]
        let text = RTTM.render(segments, fileID: "meeting 7")
        #expect(text == """
        SPEAKER meeting_7 1 0.000 1.235 <NA> <NA> spk_one <NA> <NA>
        SPEAKER meeting_7 1 12.500 1.500 <NA> <NA> B <NA> <NA>

        """)
        let parsed = try #require(try RTTM.parse(text)["meeting_7"])
        #expect(parsed.map(\.speaker) == ["spk_one", "B"])
        #expect(abs(parsed[0].endSeconds - 1.235) < 1e-9)
        #expect(parsed[1] == SpeakerSegment(speaker: "B", startSeconds: 12.5, endSeconds: 14))
    }

    @Test func uemParsesRendersAndRejectsReversedSpans() throws {
        let spans = try UEM.parse("a NA 0.000 30.000\nb 1 5 7.5\na 1 40 50\n")
        #expect(spans["a"] == [TimeSpan(startSeconds: 0, endSeconds: 30), TimeSpan(startSeconds: 40, endSeconds: 50)])
        #expect(UEM.render(spans["b"] ?? [], fileID: "b") == "b 1 5.000 7.500\n")
        do {
            _ = try UEM.parse("a 1 5 4")
            Issue.record("an end before its start must not parse")
        } catch {
            #expect(error.code == .invalidInterval)
            #expect(error.field == "tend")
            #expect(error.lineNumber == 1)
        }
    }

    /// Found by Fuzz/FuzzRTTM and Fuzz/FuzzUEM: a time such as 1e20 parsed, then trapped in `render`
    /// (its milliseconds did not fit an Int64). Times beyond 10^9 s are refused as invalid numbers.
    @Test func timesTooLargeToWriteBackAreRefused() throws {
        for text in ["SPEAKER\tfile\t1\t1e20\t2.5e-1\t<NA>\t<NA>\tSpeaker_1\t<NA>\t<NA>\n",
                     "SPEAKER f 1 0 1e300 <NA> <NA> s <NA> <NA>\n"] {
            #expect(throws: ScoringError.self) { try RTTM.parse(text) }
        }
        #expect(throws: ScoringError.self) { try UEM.parse("f 1 0 1e20\n") }
        // The largest accepted times still write back and read again unchanged.
        let largest = try RTTM.parse("SPEAKER f 1 1e9 1e9 <NA> <NA> s <NA> <NA>\n")
        let rendered = RTTM.render(largest["f"] ?? [], fileID: "f")
        #expect(RTTM.render(try RTTM.parse(rendered)["f"] ?? [], fileID: "f") == rendered)
        // Segments that did not come from `parse` are clamped rather than trapping.
        #expect(!RTTM.render([SpeakerSegment(speaker: "s", startSeconds: -1e300, endSeconds: 1e300)], fileID: "f").isEmpty)
        #expect(!UEM.render([TimeSpan(startSeconds: 1e20, endSeconds: 1e300)], fileID: "f").isEmpty)
    }

    /// Found by Fuzz/FuzzRTTM: a speaker name that starts with a combining mark (U+0303) was written
    /// after a space, which with it is one Character, so a Character split read it and the field before
    /// as one, and the speaker came back as `<NA>`. Fields now split on scalars.
    @Test func aNameStartingWithACombiningMarkRoundTrips() throws {
        let segments = [SpeakerSegment(speaker: "\u{0303}", startSeconds: 1, endSeconds: 2),
                        SpeakerSegment(speaker: "a \u{0303}b", startSeconds: 2, endSeconds: 3)]
        let rendered = RTTM.render(segments, fileID: "f\u{0303}")
        let parsed = try RTTM.parse(rendered)
        #expect(parsed["f\u{0303}"]?.map(\.speaker) == ["\u{0303}", "a_\u{0303}b"])
        #expect(RTTM.render(parsed["f\u{0303}"] ?? [], fileID: "f\u{0303}") == rendered)
    }
}
