/// One espeak-ng voice: a language/variant (`-v`), pitch 0–99 (`-p`) and speed in words per minute (`-s`).
public struct VoiceSpec: Sendable, Hashable, Codable {
    public var voice: String
    public var pitch: Int
    public var speed: Int

    public init(voice: String, pitch: Int, speed: Int) {
        self.voice = voice
        self.pitch = pitch
        self.speed = speed
    }

    /// Six voices chosen to differ in timbre (variant), accent, pitch and pace, so diarization has
    /// something real to separate.
    public static let presets: [VoiceSpec] = [
        VoiceSpec(voice: "en-us+m3", pitch: 35, speed: 165),
        VoiceSpec(voice: "en-us+f3", pitch: 65, speed: 175),
        VoiceSpec(voice: "en-gb+m7", pitch: 25, speed: 150),
        VoiceSpec(voice: "en-us+f4", pitch: 80, speed: 185),
        VoiceSpec(voice: "en+m1", pitch: 50, speed: 170),
        VoiceSpec(voice: "en+f2", pitch: 55, speed: 158),
    ]
}
