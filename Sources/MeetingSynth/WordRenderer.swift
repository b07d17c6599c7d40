/// One word in one voice: the unit the synthesizer renders and caches.
struct WordKey: Hashable, Sendable {
    var voice: VoiceSpec
    var word: String
}

/// Renders words with whichever engine each voice belongs to.
struct WordRenderer: Sendable {
    let config: SynthConfig

    func render(_ keys: [WordKey]) throws -> [WordKey: [Float]] {
        let espeak = keys.filter { $0.voice.engine == .espeak }
        let festival = keys.filter { $0.voice.engine == .festival }
        var rendered = espeak.isEmpty ? [:] : try EspeakRenderer(config: config).render(espeak)
        if !festival.isEmpty {
            rendered.merge(try FestivalRenderer(config: config).render(festival)) { first, _ in first }
        }
        return rendered
    }
}
