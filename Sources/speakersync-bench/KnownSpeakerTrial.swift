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
        /// DER (collar 0.25 s) summed over the runs, and how many found the reference's speaker count.
        var der = DERComponents.zero
        var runs = 0
        var exactCounts = 0
    }

    private(set) var profiles: [Profile] = []
    private var peopleIn: [String: Set<String>] = [:]
    /// The three ways of enrolling, in the order they are run and reported.
    enum Scenario: CaseIterable {
        case everyone, alone, absentOnly

        var title: String {
            switch self {
            case .everyone: "everyone in the set enrolled"
            case .alone: "one person of the meeting enrolled at a time"
            case .absentOnly: "only people absent from the meeting enrolled"
            }
        }
    }

    private(set) var outcomes: [Scenario: Outcome] = [:]

    /// First pass: the profiles this recording's reference people enrol with.
    mutating func addProfiles(frames: [DiarizerFrame], reference: [SpeakerSegment], recording: String) {
        let embedded = frames.filter { $0.embedding != nil }
        var seconds: [String: Double] = [:]
        var sums: [String: [Float]] = [:]
        for frame in embedded {
            guard let owner = referenceSpeaker(coveringMost: [frame.startSeconds ..< frame.endSeconds], in: reference),
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

    /// Every run of `recording` the trial makes: the way of enrolling and the known speakers, keyed by
    /// the numeric id each is enrolled under. Everyone once; each person of the meeting alone; the
    /// people absent from it together, if there are any.
    func enrolments(for recording: String) -> [(scenario: Scenario, enrolled: [Int32: Profile])] {
        let here = peopleIn[recording] ?? []
        let everyone = enrolment(for: recording)
        var runs: [(scenario: Scenario, enrolled: [Int32: Profile])] = [(.everyone, everyone)]
        runs += everyone.filter { here.contains($0.value.person) }.sorted { $0.key < $1.key }.map { (.alone, [$0.key: $0.value]) }
        let absent = everyone.filter { !here.contains($0.value.person) }
        if !absent.isEmpty { runs.append((.absentOnly, absent)) }
        return runs
    }

    /// Everyone of the set, each person enrolled from another recording than `recording` when possible.
    private func enrolment(for recording: String) -> [Int32: Profile] {
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

    static func knownSpeakers(_ enrolment: [Int32: Profile]) -> [Speaker] {
        enrolment.sorted { $0.key < $1.key }.map { id, profile in
            Speaker(id: String(id), name: profile.person, currentEmbedding: profile.embedding, durationSeconds: 5,
                    createdAt: Date(timeIntervalSince1970: 0), isPermanent: true)
        }
    }

    /// Second pass: judge the final turns of `recording` run with `enrolment`.
    mutating func judge(turns: [DiarizerTurn], reference: [SpeakerSegment], uem: [TimeSpan]?, recording: String, enrolment: [Int32: Profile],
                        scenario: Scenario) {
        var outcome = outcomes[scenario, default: Outcome()]
        defer { outcomes[scenario] = outcome }
        let hypothesis = turns.map(\.segment)
        outcome.der = outcome.der + DiarizationErrorRate.score(reference: reference, hypothesis: hypothesis, uem: uem, config: DERConfig(collarSeconds: 0.25))
        outcome.runs += 1
        if Set(hypothesis.map(\.speaker)).count == Set(reference.map(\.speaker)).count { outcome.exactCounts += 1 }
        let here = peopleIn[recording] ?? []
        for (id, profile) in enrolment.sorted(by: { $0.key < $1.key }) {
            let spans = turns.filter { $0.speaker == id }.map { $0.startSeconds ..< $0.endSeconds }
            let named = spans.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
            let majority = referenceSpeaker(coveringMost: spans, in: reference)
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
                "    DER c0.25 \(String(format: "%.1f", outcome.der.errorRate * 100)) % over \(outcome.runs) runs; speaker count exact \(outcome.exactCounts)/\(outcome.runs)",
            ] + (outcome.takenByOthers + outcome.absentAccepted).map { "      \($0)" }
        }
        return (["known speakers, decided by the diarizer at finalize (\(profiles.count) profiles from the first \(Int(enrolmentSeconds)) s of each person's frames):"]
            + Scenario.allCases.flatMap { lines($0.title, outcomes[$0, default: Outcome()]) }).joined(separator: "\n")
    }
}
