import DiarizationScoring
import Foundation
import SpeakerManager
import StreamingDiarization

/// Known-speaker false acceptance on real recordings. Each reference speaker with at least
/// `minimumEnrolmentSeconds` of embedded frames is enrolled from the mean of their first
/// `enrolmentSeconds` of frames (as a short enrolment clip would be); every later frame of the same
/// recording is then compared with that profile. At a cosine-distance threshold, false acceptance is
/// the share of other speakers' speech (frame seconds) that falls within it, i.e. would be given the
/// enrolled person's name if that person were the only candidate; false rejection is the share of the
/// person's own later speech that falls outside it. Frames take the reference speaker covering most
/// of them.
///
/// The cluster-level figures judge what speakerkit decides at finalize: each other reference speaker's
/// later frames (at least `minimumClusterSeconds`) averaged into one centroid, as a re-clustered
/// speaker is, and compared with the enrolled profile: false acceptance is the share of other people's
/// centroids within the threshold, false rejection the share of the person's own outside it. That is the
/// case of an enrolled person absent from the meeting. When they are present too, speakerkit gives their
/// name to the nearest centroid only, so another speaker takes it only if also nearer the profile than the
/// person's own centroid: the "present" figures.
struct EnrolmentTally {
    var thresholds: [Float]
    var enrolmentSeconds = 5.0
    var minimumEnrolmentSeconds = 3.0
    private var acceptedOthers: [Double]
    private var rejectedOwn: [Double]
    private var othersSeconds = 0.0
    private var ownSeconds = 0.0
    private var enrolled = 0
    var minimumClusterSeconds = 2.0
    private var clusterPairs: (own: [Float], others: [Float]) = ([], [])
    /// Per enrolled person with their own later centroid: that distance and each other speaker's.
    private var presentPairs: [(own: Float, others: [Float])] = []

    init(thresholds: [Float]) {
        self.thresholds = thresholds
        acceptedOthers = Array(repeating: 0, count: thresholds.count)
        rejectedOwn = Array(repeating: 0, count: thresholds.count)
    }

    mutating func add(frames: [DiarizerFrame], reference: [SpeakerSegment]) {
        let embedded = frames.filter { $0.embedding != nil }
        let owners = embedded.map { referenceSpeaker(coveringMost: [$0.startSeconds ..< $0.endSeconds], in: reference) }
        for person in Set(owners.compactMap { $0 }).sorted() {
            var enrolment: [Int] = []
            var seconds = 0.0
            for (index, owner) in owners.enumerated() where owner == person && seconds < enrolmentSeconds {
                enrolment.append(index)
                seconds += embedded[index].endSeconds - embedded[index].startSeconds
            }
            guard seconds >= minimumEnrolmentSeconds else { continue }
            enrolled += 1
            var profile = [Float](repeating: 0, count: embedded[enrolment[0]].embedding!.count)
            for index in enrolment { for (d, value) in embedded[index].embedding!.enumerated() { profile[d] += value } }
            let enrolmentSet = Set(enrolment)
            var ownDistance: Float?
            var otherDistances: [Float] = []
            for other in Set(owners.compactMap { $0 }).sorted() {
                let later = embedded.indices.filter { owners[$0] == other && !enrolmentSet.contains($0) }
                guard later.map({ embedded[$0].endSeconds - embedded[$0].startSeconds }).reduce(0, +) >= minimumClusterSeconds else { continue }
                guard let centroid = SpeakerUtilities.averageEmbeddings(later.map { embedded[$0].embedding! }) else { continue }
                let distance = SpeakerUtilities.cosineDistance(centroid, profile)
                if other == person {
                    clusterPairs.own.append(distance)
                    ownDistance = distance
                } else {
                    clusterPairs.others.append(distance)
                    otherDistances.append(distance)
                }
            }
            if let ownDistance { presentPairs.append((ownDistance, otherDistances)) }
            for (index, frame) in embedded.enumerated() where !enrolmentSet.contains(index) {
                guard let owner = owners[index] else { continue }
                let weight = frame.endSeconds - frame.startSeconds
                let distance = SpeakerUtilities.cosineDistance(frame.embedding!, profile)
                if owner == person { ownSeconds += weight } else { othersSeconds += weight }
                for (t, threshold) in thresholds.enumerated() {
                    if owner == person, distance >= threshold { rejectedOwn[t] += weight }
                    if owner != person, distance < threshold { acceptedOthers[t] += weight }
                }
            }
        }
    }

    var report: String {
        var lines = ["known speakers: \(enrolled) people enrolled from their first \(Int(enrolmentSeconds)) s of frames; "
            + "\(String(format: "%.1f", othersSeconds)) s of others' speech, \(String(format: "%.1f", ownSeconds)) s of their own later speech"]
        for (t, threshold) in thresholds.enumerated() {
            lines.append(String(format: "  threshold %.2f: false acceptance %.1f %%, false rejection %.1f %%", threshold,
                                100 * acceptedOthers[t] / max(othersSeconds, 1e-9), 100 * rejectedOwn[t] / max(ownSeconds, 1e-9)))
        }
        lines.append("  per speaker at finalize: \(clusterPairs.others.count) other-speaker and \(clusterPairs.own.count) own centroids")
        for threshold in [Float(0.15), 0.12, 0.1, 0.08] {
            let accepted = clusterPairs.others.filter { $0 < threshold }.count
            let rejected = clusterPairs.own.filter { $0 >= threshold }.count
            lines.append(String(format: "  cluster threshold %.2f: false acceptance %.1f %% (%d/%d), false rejection %.1f %% (%d/%d)", threshold,
                                100 * Double(accepted) / Double(max(1, clusterPairs.others.count)), accepted, clusterPairs.others.count,
                                100 * Double(rejected) / Double(max(1, clusterPairs.own.count)), rejected, clusterPairs.own.count))
        }
        let presentOthers = presentPairs.map(\.others.count).reduce(0, +)
        lines.append("  per speaker, enrolled person present (the nearest centroid takes the name): \(presentOthers) other-speaker centroids")
        for threshold in [Float(0.15), 0.12, 0.1, 0.08] {
            let accepted = presentPairs.map { pair in pair.others.filter { $0 < threshold && $0 < pair.own }.count }.reduce(0, +)
            lines.append(String(format: "  present, cluster threshold %.2f: false acceptance %.1f %% (%d/%d)", threshold,
                                100 * Double(accepted) / Double(max(1, presentOthers)), accepted, presentOthers))
        }
        return lines.joined(separator: "\n")
    }
}
