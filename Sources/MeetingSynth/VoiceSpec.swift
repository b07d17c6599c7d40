/// One synthetic voice: which synthesiser speaks it, its voice name, and (espeak-ng) pitch and pace.
public struct VoiceSpec: Sendable, Hashable, Codable {
    /// The text-to-speech engine. Two engines give timbres that differ more than any one engine's
    /// variants do, which is what a meeting of real people looks like to a diarizer.
    public enum Engine: String, Sendable, Hashable, Codable {
        /// espeak-ng (formant synthesis): `voice` is a `-v` language+variant.
        case espeak
        /// Festival (diphone or HTS voices from Debian's festvox packages): `voice` is the voice name
        /// without the `voice_` prefix, e.g. `kal_diphone`.
        case festival
    }

    public var engine: Engine
    public var voice: String
    /// espeak-ng pitch 0–99 (`-p`); Festival voices keep their own pitch.
    public var pitch: Int
    /// Words per minute: espeak-ng's `-s`; for Festival diphone voices, durations are stretched by
    /// 170 / speed (HTS voices keep their own pace: they ignore Festival's Duration_Stretch).
    public var speed: Int

    public init(voice: String, pitch: Int, speed: Int, engine: Engine = .espeak) {
        self.engine = engine
        self.voice = voice
        self.pitch = pitch
        self.speed = speed
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        engine = try container.decodeIfPresent(Engine.self, forKey: .engine) ?? .espeak
        voice = try container.decode(String.self, forKey: .voice)
        pitch = try container.decode(Int.self, forKey: .pitch)
        speed = try container.decode(Int.self, forKey: .speed)
    }

    /// Six voices chosen to differ in engine, timbre, accent, pitch and pace, so diarization has
    /// something real to separate. Engines alternate, so every meeting of two or more speakers mixes
    /// espeak-ng and Festival voices (Debian: festvox-us-slt-hts, festvox-kallpc16k, festvox-kdlpc16k).
    public static let presets: [VoiceSpec] = [
        VoiceSpec(voice: "en-us+m3", pitch: 35, speed: 165),
        VoiceSpec(voice: "cmu_us_slt_arctic_hts", pitch: 50, speed: 170, engine: .festival),
        VoiceSpec(voice: "en-gb+m7", pitch: 25, speed: 150),
        VoiceSpec(voice: "kal_diphone", pitch: 50, speed: 165, engine: .festival),
        VoiceSpec(voice: "en-us+f4", pitch: 80, speed: 185),
        VoiceSpec(voice: "ked_diphone", pitch: 50, speed: 155, engine: .festival),
    ]
}
