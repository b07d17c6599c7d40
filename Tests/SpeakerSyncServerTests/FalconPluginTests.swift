import Foundation
import PluginHost
import Testing
import TestSupport

/// The `falcon` plugin loaded with dlopen on the test double of Picovoice's library (same symbols,
/// behaviour chosen by the AccessKey): availability and its reasons, options, the live sliding window
/// with labels kept across windows, the final pass, and the key kept out of everything it reports.
@Suite(.serialized) struct FalconPluginTests {
    static let pluginID = "speakersync-falcon"

    static func section(key: String?, library: String? = nil, model: String? = nil) throws -> String {
        var object: [String: Any] = ["library": try library ?? FalconDouble.library().path, "model": try model ?? FalconDouble.model().path]
        if let key { object["access_key"] = key }
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static func registry(_ section: String) throws -> PluginRegistry {
        try TestPlugins.freshRegistry(pluginID, configuration: ProviderConfiguration(sections: ["falcon": section]))
    }

    /// Two voices as tones the double tells apart (150 Hz and 500 Hz): A 0-12 s, B 12.5-24 s, A 24.5-36 s.
    static let meeting: [Float] = {
        func tone(_ hertz: Double, _ seconds: Double) -> [Float] {
            (0 ..< Int(seconds * 16_000)).map { Float(0.3 * sin(2 * Double.pi * hertz * Double($0) / 16_000)) }
        }
        let pause = [Float](repeating: 0, count: 8_000)
        return tone(150, 12) + pause + tone(500, 11.5) + pause + tone(150, 11.5)
    }()

    /// The speaker covering `seconds` in a set of turns.
    static func speaker(at seconds: Double, in turns: [UInt64: ProviderTurn]) -> Int32? {
        turns.values.first { $0.startSeconds <= seconds && seconds < $0.endSeconds }?.speaker
    }

    @Test func configuredWithAKeyItServesAndSaysWhatItIs() throws {
        let registry = try Self.registry(try Self.section(key: "double-ok"))
        let falcon = try #require(registry.provider(id: "falcon"))
        #expect(falcon.unavailableReason == nil)
        #expect(falcon.name == "Picovoice Falcon 2.0.1-test-double")
        #expect(falcon.latencyClass == .nearRealtime)
        #expect(falcon.requirements.contains("PICOVOICE_ACCESS_KEY"))
        #expect(falcon.measured.hasPrefix("not measurable here: "))
        #expect(falcon.licence.contains("AccessKey"))
    }

    @Test func liveWindowsKeepEachVoicesLabelAndTheFinalPassRevisesEveryTurn() throws {
        let registry = try Self.registry(try Self.section(key: "double-ok"))
        let instance = try registry.makeInstance(providerID: "falcon", sessionID: "windows", optionsJSON: #"{"window_seconds": 10, "step_seconds": 2}"#)
        var turns: [UInt64: ProviderTurn] = [:]
        var labelOfA: Int32?, labelOfB: Int32?
        var firstTurnAtSeconds: Double?
        for start in stride(from: 0, to: Self.meeting.count, by: 1600) {
            try instance.push(samples: Array(Self.meeting[start ..< min(Self.meeting.count, start + 1600)]))
            for turn in try instance.pullTurns() {
                if turn.isRemoved { turns[turn.turnID] = nil } else { turns[turn.turnID] = turn }
            }
            if firstTurnAtSeconds == nil, !turns.isEmpty { firstTurnAtSeconds = Double(start + 1600) / 16_000 }
            // Once a voice has a label, every later window keeps it while the voice is in the window.
            if let a = Self.speaker(at: 11, in: turns) {
                #expect(labelOfA == nil || labelOfA == a, "A's label changed at \(Double(start) / 16_000) s")
                labelOfA = a
            }
            if let b = Self.speaker(at: 20, in: turns) {
                #expect(labelOfB == nil || labelOfB == b, "B's label changed at \(Double(start) / 16_000) s")
                labelOfB = b
            }
        }
        #expect(firstTurnAtSeconds == 2.0, "the first window runs after step_seconds of audio")
        #expect(labelOfA != nil && labelOfB != nil && labelOfA != labelOfB)
        let live = turns
        // Live, A's return comes 12 s after A last spoke, beyond the 10 s window: a new label.
        #expect(Self.speaker(at: 30, in: live) != labelOfA)

        let final = try instance.finalize()
        for turn in final {
            if turn.isRemoved { turns[turn.turnID] = nil } else { turns[turn.turnID] = turn }
        }
        #expect(Set(final.filter(\.isRemoved).map(\.turnID)) == Set(live.keys), "every live turn is withdrawn")
        #expect(Set(turns.keys).isDisjoint(with: Set(live.keys)))
        // One pass over the whole session: A is one speaker again, with its first label.
        #expect(Self.speaker(at: 5, in: turns) == labelOfA)
        #expect(Self.speaker(at: 20, in: turns) == labelOfB)
        #expect(Self.speaker(at: 30, in: turns) == labelOfA)
        #expect(turns.values.allSatisfy { (0 ... 1).contains($0.confidence) })
    }

    @Test func withLiveOffTurnsComeOnlyAtFinalize() throws {
        let registry = try Self.registry(try Self.section(key: "double-ok"))
        let instance = try registry.makeInstance(providerID: "falcon", sessionID: "offline", optionsJSON: #"{"live": 0}"#)
        for start in stride(from: 0, to: Self.meeting.count, by: 1600) {
            try instance.push(samples: Array(Self.meeting[start ..< min(Self.meeting.count, start + 1600)]))
            #expect(try instance.pullTurns().isEmpty)
        }
        let final = try instance.finalize()
        #expect(final.count == 3)
        #expect(Set(final.map(\.speaker)).count == 2)
    }

    @Test(arguments: [
        (#"{"access_key": "double-ok"}"#, "the Picovoice AccessKey is server configuration"),
        (#"{"num_speakers": 2}"#, "num_speakers: Falcon takes no speaker count"),
        (#"{"window_seconds": 500}"#, "window_seconds must be a number in 5.0...120.0"),
        (#"{"step_seconds": 20, "window_seconds": 10}"#, "step_seconds (20.0) is above window_seconds (10.0)"),
        (#"{"windows": 10}"#, "unknown option 'windows' (known: live, step_seconds, window_seconds)"),
        (#"{"live": 2}"#, "live must be a number in 0.0...1.0"),
        (#"{"step_seconds": "5"}"#, "step_seconds must be a number in 1.0...60.0"),
    ])
    func badOptionsAreRefusedWithTheReason(options: String, expected: String) throws {
        let registry = try Self.registry(try Self.section(key: "double-ok"))
        do {
            _ = try registry.makeInstance(providerID: "falcon", sessionID: "s", optionsJSON: options)
            Issue.record("options \(options) were accepted")
        } catch {
            #expect(error.code == .invalidOptions)
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test func withoutAKeyItIsUnavailableAndSaysWhereToSetOne() throws {
        unsetenv("PICOVOICE_ACCESS_KEY")
        let registry = try Self.registry(try Self.section(key: nil))
        let reason = try #require(registry.provider(id: "falcon")?.unavailableReason)
        #expect(reason.hasPrefix("no Picovoice AccessKey: set PICOVOICE_ACCESS_KEY, or 'access_key' in the 'falcon' section"))
        #expect(throws: PluginError.self) { _ = try registry.makeInstance(providerID: "falcon", sessionID: "s", optionsJSON: "{}") }
    }

    @Test func aFailedActivationIsTheReasonWithPicovoicesMessagesAndNoKey() throws {
        let key = "double-activation-fails-s3cr3t-value"
        let registry = try Self.registry(try Self.section(key: key))
        let falcon = try #require(registry.provider(id: "falcon"))
        let reason = try #require(falcon.unavailableReason)
        #expect(reason.hasPrefix("Picovoice could not activate the AccessKey: pv_falcon_init failed: ACTIVATION_ERROR: [0] Picovoice Error. "
            + "[1] Failed to activate AccessKey `[redacted]`"), "\(reason)")
        for text in [reason, falcon.name, falcon.description, falcon.requirements, falcon.measured] {
            #expect(!text.contains("s3cr3t"))
        }
        do {
            _ = try registry.makeInstance(providerID: "falcon", sessionID: "s", optionsJSON: "{}")
            Issue.record("a session started without an activated key")
        } catch {
            #expect(error.code == .providerUnavailable)
            #expect(!error.message.contains("s3cr3t"))
        }
    }

    @Test func theKeyIsNeverLoggedThoughPicovoicesMessagesQuoteIt() throws {
        let log = CapturedLog()
        let key = "double-activation-fails-l0gg3d-secret"
        let registry = try TestPlugins.freshRegistry(Self.pluginID, configuration: ProviderConfiguration(sections: ["falcon": try Self.section(key: key)]),
                                                     logger: log.logger(level: .trace))
        #expect(registry.provider(id: "falcon")?.unavailableReason != nil)
        #expect(log.lines.contains { $0.message.contains("falcon is unavailable") || $0.metadata.values.contains { $0.contains("Picovoice could not activate") } })
        for line in log.lines {
            #expect(!line.message.contains("l0gg3d"), "\(line.message)")
            #expect(!line.metadata.values.contains { $0.contains("l0gg3d") }, "\(line.metadata)")
        }
    }

    @Test func aMissingLibraryOrModelSaysToRunSetup() throws {
        let noLibrary = try Self.registry(try Self.section(key: "double-ok", library: "/nonexistent/libpv_falcon.so"))
        let reason = try #require(noLibrary.provider(id: "falcon")?.unavailableReason)
        #expect(reason.contains("cannot open the Falcon library /nonexistent/libpv_falcon.so"))
        #expect(reason.contains("run scripts/setup"))
        let noModel = try Self.registry(try Self.section(key: "double-ok", model: "/nonexistent/falcon_params.pv"))
        #expect(noModel.provider(id: "falcon")?.unavailableReason?.contains("the Falcon model /nonexistent/falcon_params.pv does not exist") == true)
    }
}
