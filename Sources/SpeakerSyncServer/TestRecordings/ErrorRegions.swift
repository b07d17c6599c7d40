import DiarizationScoring

/// One stretch of time where a provider's turns are wrong against the reference, in the terms of
/// pyannote.metrics' diarization error rate.
struct ErrorRegion: Sendable, Equatable {
    enum Kind: String, Sendable, CaseIterable {
        /// Reference speech no hypothesis speaker covers.
        case missed
        /// Hypothesis speech beyond the reference speakers talking then.
        case falseAlarm = "false_alarm"
        /// Speech given to a speaker other than the one mapped to the reference speaker.
        case confusion
    }

    var kind: Kind
    var startSeconds: Double
    var endSeconds: Double
    /// Speakers' worth of error at once: overlapped speech can miss or confuse two.
    var speakers: Int

    var durationSeconds: Double { endSeconds - startSeconds }
}

/// Where the error of `DiarizationErrorRate` lies in time, so the console can draw it: at each
/// instant of the scored region, with `nref` reference and `nhyp` hypothesis speakers talking,
/// missed = max(0, nref − nhyp), false alarm = max(0, nhyp − nref), confusion = min(nref, nhyp) −
/// correct, where correct counts hypothesis speakers whose mapped reference speaker is talking. The
/// mapping is the score's own (`DERComponents.mapping`, the optimal one-to-one assignment), so the
/// regions' seconds add up to its missed, false alarm and confusion at collar 0.
enum ErrorRegions {
    static func compute(reference: [SpeakerSegment], hypothesis: [SpeakerSegment], uem: [TimeSpan],
                        mapping: [String: String]) -> [ErrorRegion] {
        // Sweep the turn edges: between two consecutive edges the speakers talking do not change.
        enum Side { case reference, hypothesis }
        var events: [(time: Double, delta: Int, side: Side, speaker: String)] = []
        for (side, turns) in [(Side.reference, reference), (Side.hypothesis, hypothesis)] {
            for turn in turns where turn.startSeconds.isFinite && turn.endSeconds.isFinite && turn.endSeconds > turn.startSeconds {
                events.append((turn.startSeconds, 1, side, turn.speaker))
                events.append((turn.endSeconds, -1, side, turn.speaker))
            }
        }
        events.sort { $0.time < $1.time }
        var talking: [Side: [String: Int]] = [.reference: [:], .hypothesis: [:]]
        var regions: [ErrorRegion] = []
        var index = 0
        while index < events.count {
            let time = events[index].time
            while index < events.count, events[index].time == time {
                let event = events[index]
                talking[event.side, default: [:]][event.speaker, default: 0] += event.delta
                if talking[event.side]?[event.speaker] == 0 { talking[event.side]?[event.speaker] = nil }
                index += 1
            }
            guard index < events.count else { break }
            let next = events[index].time
            let referenceSpeakers = Set(talking[.reference, default: [:]].keys)
            let hypothesisSpeakers = Set(talking[.hypothesis, default: [:]].keys)
            let correct = hypothesisSpeakers.filter { mapping[$0].map(referenceSpeakers.contains) ?? false }.count
            let counts: [(ErrorRegion.Kind, Int)] = [
                (.missed, max(0, referenceSpeakers.count - hypothesisSpeakers.count)),
                (.falseAlarm, max(0, hypothesisSpeakers.count - referenceSpeakers.count)),
                (.confusion, min(referenceSpeakers.count, hypothesisSpeakers.count) - correct),
            ]
            for (kind, speakers) in counts where speakers > 0 {
                for span in uem {
                    let start = max(time, span.startSeconds), end = min(next, span.endSeconds)
                    if end > start { append(ErrorRegion(kind: kind, startSeconds: start, endSeconds: end, speakers: speakers), to: &regions) }
                }
            }
        }
        return regions.sorted { ($0.startSeconds, $0.kind.rawValue) < ($1.startSeconds, $1.kind.rawValue) }
    }

    /// Adds `region`, joined to an earlier one of the same kind and weight that it continues.
    private static func append(_ region: ErrorRegion, to regions: inout [ErrorRegion]) {
        if let index = regions.lastIndex(where: { $0.kind == region.kind }), regions[index].speakers == region.speakers,
           regions[index].endSeconds == region.startSeconds {
            regions[index].endSeconds = region.endSeconds
        } else {
            regions.append(region)
        }
    }

    /// Seconds of each kind, weighted by speakers (what DER adds up).
    static func seconds(_ regions: [ErrorRegion]) -> [ErrorRegion.Kind: Double] {
        var totals: [ErrorRegion.Kind: Double] = [:]
        for region in regions { totals[region.kind, default: 0] += region.durationSeconds * Double(region.speakers) }
        return totals
    }
}
