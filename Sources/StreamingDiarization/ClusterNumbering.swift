/// Which online speaker's number each cluster of a re-clustering takes (live passes and finalize), so
/// that a number stays with the person it was first shown for.
///
/// Why not by shared speech alone (the pair sharing the most time first, as it was): when online
/// assignment has folded two people into one speaker, that speaker's number went to whichever of them
/// had talked more by then. On sample.wav the second person had: the live pass that separated them
/// renamed the first voice, shown as Speaker 1 from her first word, Speaker 2, and finalize kept that
/// (docs/accuracy.md, "Speaker numbers that stay"). A device user who had named Speaker 1 then found the
/// name on the other person.
///
/// The rule: each online speaker, in the order they were first heard, claims the cluster holding most of
/// their first `foundingSeconds` of frames, the voice the number was made for, unless an earlier speaker
/// claimed it. The pairs left then go by shared speech, one to one, as before. A cluster still without a
/// speaker gets a new number from the caller. Pure.
public enum ClusterNumbering {
    struct Frame: Sendable, Equatable {
        var cluster: Int
        /// The online speaker the frame was published with (nil: none yet).
        var speaker: Int32?
        var seconds: Double
    }

    /// Two seconds: four of speakerkit's frames, enough for a majority, and early enough that the
    /// online profile had not yet drifted to another voice.
    public static let foundingSeconds = 2.0

    /// - Parameters:
    ///   - frames: every re-clustered frame, in time order.
    ///   - foundingSeconds: 0 skips the founders' claims (shared speech alone).
    static func speakers(of frames: [Frame], foundingSeconds: Double = foundingSeconds) -> [Int: Int32] {
        var founding: [Int32: [Int: Double]] = [:]
        var foundingLeft: [Int32: Double] = [:]
        var firstHeard: [Int32] = []
        var shared: [Int: [Int32: Double]] = [:]
        for frame in frames {
            guard let speaker = frame.speaker else { continue }
            shared[frame.cluster, default: [:]][speaker, default: 0] += frame.seconds
            if foundingLeft[speaker] == nil {
                firstHeard.append(speaker)
                foundingLeft[speaker] = foundingSeconds
            }
            if foundingLeft[speaker]! > 0 {
                founding[speaker, default: [:]][frame.cluster, default: 0] += frame.seconds
                foundingLeft[speaker]! -= frame.seconds
            }
        }
        var speakerOfCluster: [Int: Int32] = [:]
        var used = Set<Int32>()
        for speaker in firstHeard {
            // Most founding speech; a tie goes to the lower cluster, so the result does not depend on hashing.
            guard let cluster = founding[speaker]?.max(by: { ($0.value, $1.key) < ($1.value, $0.key) })?.key,
                  speakerOfCluster[cluster] == nil
            else { continue }
            speakerOfCluster[cluster] = speaker
            used.insert(speaker)
        }
        var pairs: [(seconds: Double, cluster: Int, speaker: Int32)] = []
        for (cluster, speakersSeconds) in shared { for (speaker, seconds) in speakersSeconds { pairs.append((seconds, cluster, speaker)) } }
        pairs.sort { ($0.seconds, $1.cluster, $1.speaker) > ($1.seconds, $0.cluster, $0.speaker) }
        for pair in pairs where speakerOfCluster[pair.cluster] == nil && !used.contains(pair.speaker) {
            speakerOfCluster[pair.cluster] = pair.speaker
            used.insert(pair.speaker)
        }
        return speakerOfCluster
    }

    /// The online speakers the frames were published with.
    static func onlineSpeakers(of frames: [Frame]) -> Set<Int32> { Set(frames.compactMap(\.speaker)) }
}
