import DiarizationScoring
import Foundation
import SpeakerManager
import StreamingDiarization

/// Known speakers judged on what speakerkit's diarizer actually decides, not on distances alone.
///
/// The first pass over a set gives every reference person with at least `minimumEnrolmentSeconds` of
/// embedded frames in a recording a profile: the mean of their first `enrolmentSeconds` of frames there.
/// The second pass runs each recording again with people enrolled as permanent known speakers, as a
/// device's enrolled people are: for a person who speaks in the recording, the profile comes from
/// another recording when they have one (AMI speaker ids are global, so ami-dev's repeat speakers are
/// recognised across meetings), else from this one; and every person of the set who does not speak in it
/// is enrolled too. At finalize, each enrolled id that labels speech is judged by the reference speaker
/// covering most of its time:
/// - present person: recognised (their own speech), taken by someone else, or not recognised;
/// - absent person: any speech under their name is a false acceptance.
///
/// A third pass enrols each present person alone, the others of the meeting unknown: the case where a
/// loose threshold or a close voice (sample.wav's two people are 0.09 apart) could hand the one known
/// name to someone else. A fourth enrols only the people who are not in the meeting: every name given
/// out is a false acceptance, with nobody's own voice there to claim it first.
struct KnownSpeakerTrial {
    var enrolmentSeconds = 5.0
    var minimumEnrolmentSeconds = 3.0

    struct Profile {
        var person: String
        var recording: String
        var embedding: [Float]
    }

    /// What one way of enrolling led to.
    struct Outcome {
        var recognised = (fromOtherRecording: 0, fromSameRecording: 0)
        var present = (fromOtherRecording: 0, fromSameRecording: 0)
        var takenByOthers: [String] = []
        var absentEnrolled = 0
        var absentAccepted: [String] = []
    }

    private(set) var profiles: [Profile] = []
    private var peopleIn: [String: Set<String>] = [:]
    private(set) var everyone = Outcome()
    private(set) var alone = Outcome()
    private(set) var absentOnly = Outcome()

    /// First pass: the profiles this recording's reference people enrol with.
    mutating func addProfiles(frames: [DiarizerFrame], reference: [SpeakerSegment], recording: String) {
        let embedded = frames.filter { $0.embedding != nil }
        var seconds: [String: Double] = [:]
        var sums: [String: [Float]] = [:]
        for frame in embedded {
            guard let owner = Self.owner(of: frame.startSeconds ..< frame.endSeconds, in: reference),
                  seconds[owner, default: 0] < enrolmentSeconds else { continue }
            seconds[owner, default: 0] += frame.endSeconds - frame.startSeconds
            var sum = sums[owner] ?? [Float](repeating: 0, count: frame.embedding!.count)
            for (d, value) in frame.embedding!.enumerated() { sum[d] += value }
            sums[owner] = sum
        }
        for (person, sum) in sums.sorted(by: { $0.key < $1.key }) where seconds[person, default: 0] >= minimumEnrolmentSeconds {
            // Unit length, as the server's enrolment stores a profile.
            let norm = sum.reduce(0) { $0 + $1 * $1 }.squareRoot()
            profiles.append(Profile(person: person, recording: recording, embedding: sum.map { $0 / norm }))
        }
        peopleIn[recording] = Set(reference.map(\.speaker))
    }

    /// The known speakers to run `recording` with, keyed by the numeric id each is enrolled under.
    func enrolment(for recording: String) -> [Int32: Profile] {
        var chosen: [String: Profile] = [:]
        for person in Set(profiles.map(\.person)) {
            // Enrolment comes before the meeting: a profile from another recording when there is one.
            let theirs = profiles.filter { $0.person == person }
            chosen[person] = theirs.first { $0.recording != recording } ?? theirs.first
        }
        var result: [Int32: Profile] = [:]
        for (index, person) in chosen.keys.sorted().enumerated() { result[Int32(1000 + index)] = chosen[person] }
        return result
    }

    /// Everyone of the set who does not speak in `recording`.
    func enrolmentOfAbsentPeople(for recording: String) -> [Int32: Profile] {
        let here = peopleIn[recording] ?? []
        return enrolment(for: recording).filter { !here.contains($0.value.person) }
    }

    enum Scenario { case everyone, alone, absentOnly }

    /// One enrolment per person of `recording` with a profile, each holding that person alone.
    func enrolmentsAlone(for recording: String) -> [[Int32: Profile]] {
        let here = peopleIn[recording] ?? []
        return enrolment(for: recording).filter { here.contains($0.value.person) }.sorted { $0.key < $1.key }.map { [$0.key: $0.value] }
    }

    static func knownSpeakers(_ enrolment: [Int32: Profile]) -> [Speaker] {
        enrolment.sorted { $0.key < $1.key }.map { id, profile in
            Speaker(id: String(id), name: profile.person, currentEmbedding: profile.embedding, durationSeconds: 5,
                    createdAt: Date(timeIntervalSince1970: 0), isPermanent: true)
        }
    }

    /// Second pass: judge the final turns of `recording` run with `enrolment`.
    mutating func judge(turns: [DiarizerTurn], reference: [SpeakerSegment], recording: String, enrolment: [Int32: Profile], scenario: Scenario) {
        var outcome = switch scenario { case .everyone: everyone; case .alone: alone; case .absentOnly: absentOnly }
        defer {
            switch scenario {
            case .everyone: everyone = outcome
            case .alone: alone = outcome
            case .absentOnly: absentOnly = outcome
            }
        }
        let here = peopleIn[recording] ?? []
        for (id, profile) in enrolment.sorted(by: { $0.key < $1.key }) {
            var covered: [String: Double] = [:]
            var named = 0.0
            for turn in turns where turn.speaker == id {
                named += turn.endSeconds - turn.startSeconds
                for segment in reference {
                    let shared = min(turn.endSeconds, segment.endSeconds) - max(turn.startSeconds, segment.startSeconds)
                    if shared > 0 { covered[segment.speaker, default: 0] += shared }
                }
            }
            let majority = covered.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
            let fromOther = profile.recording != recording
            if here.contains(profile.person) {
                if fromOther { outcome.present.fromOtherRecording += 1 } else { outcome.present.fromSameRecording += 1 }
                if named == 0 { continue }
                if majority == profile.person {
                    if fromOther { outcome.recognised.fromOtherRecording += 1 } else { outcome.recognised.fromSameRecording += 1 }
                } else {
                    outcome.takenByOthers.append("\(recording): \(profile.person)'s name on \(majority ?? "non-speech")")
                }
            } else {
                outcome.absentEnrolled += 1
                if named > 0 { outcome.absentAccepted.append("\(recording): absent \(profile.person)'s name on \(majority ?? "non-speech") (\(String(format: "%.1f", named)) s)") }
            }
        }
    }

    var report: String {
        func lines(_ title: String, _ outcome: Outcome) -> [String] {
            [
                "  \(title):",
                "    present, enrolled from another recording: recognised \(outcome.recognised.fromOtherRecording)/\(outcome.present.fromOtherRecording)",
                "    present, enrolled from the same recording: recognised \(outcome.recognised.fromSameRecording)/\(outcome.present.fromSameRecording)",
                "    present person's name on someone else: \(outcome.takenByOthers.count)",
                "    absent people enrolled: \(outcome.absentEnrolled) (person × recording); their name given to someone: \(outcome.absentAccepted.count)",
            ] + (outcome.takenByOthers + outcome.absentAccepted).map { "      \($0)" }
        }
        return (["known speakers, decided by the diarizer at finalize (\(profiles.count) profiles from the first \(Int(enrolmentSeconds)) s of each person's frames):"]
            + lines("everyone in the set enrolled", everyone) + lines("one person of the meeting enrolled at a time", alone)
            + lines("only people absent from the meeting enrolled", absentOnly)).joined(separator: "\n")
    }

    static func owner(of span: Range<Double>, in reference: [SpeakerSegment]) -> String? {
        var overlap: [String: Double] = [:]
        for turn in reference {
            let shared = min(span.upperBound, turn.endSeconds) - max(span.lowerBound, turn.startSeconds)
            if shared > 0 { overlap[turn.speaker, default: 0] += shared }
        }
        return overlap.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }
}
