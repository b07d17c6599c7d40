import Foundation
import Testing
@testable import StreamingDiarization
import DeterministicRandom

/// Frame embeddings of a made-up meeting: speakers whose centres are `centreCosine` apart and whose
/// frames scatter around their centre about as far (cosine ≈ 0.89), speaking in turns of
/// `turnFrames` frames, as GE2E frames of similar voices do.
struct SyntheticFrames {
    var embeddings: [[Float]] = []
    var speakers: [Int] = []
    /// Each speaker's centre (unit length).
    private(set) var centres: [[Float]] = []
    private var random: SeededRandom

    init(speakers count: Int, turns: Int, turnFrames: ClosedRange<Int>, centreCosine: Float = 0.92,
         dimension: Int = 16, seed: UInt64) {
        random = SeededRandom(seed: seed)
        makeCentres(count, centreCosine: centreCosine, dimension: dimension)
        var speaker = 0
        for turn in 0 ..< turns {
            // Everyone speaks once in order, then a random other person takes each turn.
            if turn > 0 { speaker = turn < count ? turn : (speaker + 1 + Int(random.next() % UInt64(max(1, count - 1)))) % count }
            speak(speaker, frames: turnFrames.lowerBound + Int(random.next() % UInt64(turnFrames.count)))
        }
    }

    /// Turns as given: `script` lists each turn's speaker and length in frames. `pull` moves one
    /// speaker's centre a share of the way toward another's (one voice's drifted half, say).
    init(speakers count: Int, script: [(speaker: Int, frames: Int)], centreCosine: Float = 0.92, dimension: Int = 16, seed: UInt64,
         pull: (speaker: Int, toward: Int, share: Float)? = nil) {
        random = SeededRandom(seed: seed)
        makeCentres(count, centreCosine: centreCosine, dimension: dimension)
        if let pull {
            centres[pull.speaker] = unitLength(zip(centres[pull.speaker], centres[pull.toward]).map { $0 + pull.share * ($1 - $0) })
        }
        for turn in script { speak(turn.speaker, frames: turn.frames) }
    }

    private mutating func gaussian() -> Float {
        let u = max(random.unit(), 1e-12), v = random.unit()
        return Float((-2 * log(u)).squareRoot() * cos(2 * Double.pi * v))
    }

    /// Centres: a shared direction plus an orthogonal part per speaker, sized for the cosine wanted.
    private mutating func makeCentres(_ count: Int, centreCosine: Float, dimension: Int) {
        let shared = unitLength((0 ..< dimension).map { _ in gaussian() })
        let spread = ((1 - centreCosine) / centreCosine).squareRoot()
        centres = (0 ..< count).map { s -> [Float] in
            var own = [Float](repeating: 0, count: dimension)
            own[(s + 1) % dimension] = 1
            let projection = zip(own, shared).reduce(0) { $0 + $1.0 * $1.1 }
            own = unitLength(zip(own, shared).map { $0 - projection * $1 })
            return unitLength(zip(shared, own).map { $0 + spread * $1 })
        }
    }

    private mutating func speak(_ speaker: Int, frames: Int) {
        let noise: Float = 0.5   // frame-to-centre cosine ≈ 0.89
        let dimension = centres[speaker].count
        for _ in 0 ..< frames {
            let g = unitLength((0 ..< dimension).map { _ in gaussian() })
            embeddings.append(unitLength(zip(centres[speaker], g).map { $0 + noise * $1 }))
            speakers.append(speaker)
        }
    }

    /// Share of frames whose cluster, mapped one-to-one onto speakers by most shared frames, is right.
    func accuracy(_ labels: [Int]) -> Double { Self.agreement(labels, speakers) }

    /// `accuracy` against any per-frame truth.
    static func agreement(_ labels: [Int], _ speakers: [Int]) -> Double {
        var shared: [Int: [Int: Int]] = [:]
        for (label, speaker) in zip(labels, speakers) { shared[label, default: [:]][speaker, default: 0] += 1 }
        var pairs = shared.flatMap { label, row in row.map { (count: $0.value, label: label, speaker: $0.key) } }
        pairs.sort { ($0.count, $1.label, $1.speaker) > ($1.count, $0.label, $0.speaker) }
        var usedLabels = Set<Int>(), usedSpeakers = Set<Int>(), correct = 0
        for pair in pairs where !usedLabels.contains(pair.label) && !usedSpeakers.contains(pair.speaker) {
            usedLabels.insert(pair.label)
            usedSpeakers.insert(pair.speaker)
            correct += pair.count
        }
        return Double(correct) / Double(labels.count)
    }
}

@Suite struct SmoothedKMeansTests {
    @Test(arguments: [2, 3, 4])
    func findsTheSpeakerCount(speakers: Int) {
        let meeting = SyntheticFrames(speakers: speakers, turns: 12, turnFrames: 20 ... 40, centreCosine: 0.85, seed: UInt64(speakers))
        let result = SmoothedKMeans(meeting.embeddings).cluster()
        #expect(Set(meeting.speakers).count == speakers)
        #expect(result.count == speakers, "costs \(result.costs)")
        #expect(meeting.accuracy(result.labels) >= 0.95)
    }

    /// Voices whose centres are as close as one voice's frames are to each other: average linkage at
    /// its default threshold merges them, and one more speaker lowers the smoothed cost by less than
    /// `minimumGain`; they are counted because they take turns (every cluster returns, and clusters
    /// are coherent in time).
    @Test(arguments: [2, 3, 4])
    func separatesCloseVoicesThatTakeTurns(speakers: Int) {
        let meeting = SyntheticFrames(speakers: speakers, turns: 12, turnFrames: 20 ... 40, seed: UInt64(speakers))
        let result = SmoothedKMeans(meeting.embeddings).cluster()
        #expect(Set(meeting.speakers).count == speakers)
        #expect(result.count == speakers, "costs \(result.costs)")
        #expect(meeting.accuracy(result.labels) >= 0.95)
        var gainOnly = SmoothedKMeans.Config.default
        gainOnly.minimumCoherence = 0
        #expect(SmoothedKMeans(meeting.embeddings, config: gainOnly).cluster().count < speakers)
        let linkage = AgglomerativeClustering.cluster(
            meeting.embeddings, weights: Array(repeating: 1, count: meeting.embeddings.count), threshold: DiarizerConfig.default.clusterThreshold)
        #expect(Set(linkage).count < speakers)
    }

    /// The turn-taking way alone (the gain way shut): the same two close centres, each held for one
    /// long stretch as one voice drifts once in a monologue (ami-dev trn03), make no second speaker;
    /// in alternating turns they make two.
    @Test func aVoiceThatDriftsOnceIsNotSplitByTurnTaking() {
        var turnTakingOnly = SmoothedKMeans.Config.default
        turnTakingOnly.minimumGain = 1
        for seed in UInt64(20) ..< 25 {
            let drift = SyntheticFrames(speakers: 2, turns: 2, turnFrames: 80 ... 120, seed: seed)
            #expect(SmoothedKMeans(drift.embeddings, config: turnTakingOnly).cluster().count == 1, "seed \(seed)")
            let turns = SyntheticFrames(speakers: 2, turns: 8, turnFrames: 20 ... 30, seed: seed)
            #expect(SmoothedKMeans(turns.embeddings, config: turnTakingOnly).cluster().count == 2, "seed \(seed)")
        }
    }

    /// Labels that change only between long turns are coherent far beyond chance; labels drawn
    /// independently frame by frame are not; frames in different stretches of speech are never paired.
    @Test func coherenceMeasuresTurnTaking() {
        let frames = Array(repeating: [Float(1), 0], count: 200)
        let kmeans = SmoothedKMeans(frames)
        let turns = (0 ..< 200).map { ($0 / 10) % 2 }
        #expect(kmeans.coherence(turns, 2) > 5)
        var random = SeededRandom(seed: 42)
        var total: Float = 0
        for _ in 0 ..< 20 {
            let independent = (0 ..< 200).map { _ in random.chance(0.5) ? 1 : 0 }
            let z = kmeans.coherence(independent, 2)
            #expect(abs(z) < 3.5)
            total += z
        }
        #expect(abs(total / 20) < 1)
        let apart = (0 ..< 200).map { SmoothedKMeans.FramePosition(stretch: $0, index: 0) }
        #expect(SmoothedKMeans(frames, positions: apart).coherence(turns, 2) == 0)
    }

    @Test func oneVoiceStaysOneSpeaker() {
        var lowGain = SmoothedKMeans.Config.default
        lowGain.minimumGain = 0.02
        lowGain.minimumCoherence = 0
        for seed in UInt64(10) ..< 15 {
            let meeting = SyntheticFrames(speakers: 1, turns: 8, turnFrames: 10 ... 30, seed: seed)
            for config in [SmoothedKMeans.Config.default, lowGain] {
                let result = SmoothedKMeans(meeting.embeddings, config: config).cluster()
                #expect(result.count == 1, "seed \(seed), gain \(config.minimumGain): costs \(result.costs)")
            }
        }
    }

    /// The fourth of four close voices says two turns of 5 frames (synth4-00's fourth voice: 4 s in two
    /// turns): `cluster()` does not count it. Grown from that person's profile
    /// (their centre), the split gives them their frames; a profile of a voice not in the meeting
    /// attracts no frame and splits nothing.
    @Test func aProfileSplitsOffAVoiceTooBriefToCount() throws {
        let script = [(0, 30), (1, 30), (2, 20), (3, 5), (0, 30), (1, 30), (2, 15), (3, 5), (1, 15), (0, 20)]
        let meeting = SyntheticFrames(speakers: 4, script: script.map { (speaker: $0.0, frames: $0.1) }, seed: 7)
        let kmeans = SmoothedKMeans(meeting.embeddings)
        let counted = kmeans.cluster()
        #expect(counted.count == 3, "costs \(counted.costs)")
        let grown = kmeans.splitting(counted.labels, around: meeting.centres[3])
        let split = try #require(grown)
        #expect(Set(split).count == 4)
        let brief = meeting.speakers.indices.filter { meeting.speakers[$0] == 3 }
        // At least one of the two brief turns survives the smoothing (5 frames barely pay for a change of
        // speaker), and what the new cluster holds is that voice.
        #expect(brief.filter { split[$0] == 3 }.count * 2 >= brief.count, "\(brief.map { split[$0] })")
        let members = split.indices.filter { split[$0] == 3 }
        #expect(members.filter { meeting.speakers[$0] == 3 }.count * 10 >= members.count * 8)
        #expect(meeting.accuracy(split) > meeting.accuracy(counted.labels))
        let elsewhere = SyntheticFrames(speakers: 1, script: [], seed: 99).centres[0]
        let absent = kmeans.splitting(counted.labels, around: elsewhere)
        #expect(absent == nil)
    }

    /// Nobody enrolled: four voices, the fourth says two turns of 5 frames, and the count folded it
    /// into the third (as it folds synth4-00's fourth voice). Its frames are the ones least like the
    /// centre they were folded into, and like each other, so a cluster grown from them takes that voice.
    @Test func aVoiceTheCountMissedIsSplitOffFromItsOutliers() throws {
        let script = [(0, 30), (1, 30), (2, 20), (3, 5), (0, 30), (1, 30), (2, 15), (3, 5), (1, 15), (0, 20)]
        let meeting = SyntheticFrames(speakers: 4, script: script.map { (speaker: $0.0, frames: $0.1) }, centreCosine: 0.8, seed: 7)
        let folded = meeting.speakers.map { min($0, 2) }
        let seconds = [Double](repeating: 0.5, count: folded.count)
        let grown = SmoothedKMeans(meeting.embeddings).splittingOffUncountedVoice(folded, seconds: seconds)
        let split = try #require(grown)
        #expect(Set(split).count == 4)
        let members = split.indices.filter { split[$0] == 3 }
        #expect(members.filter { meeting.speakers[$0] == 3 }.count * 10 >= members.count * 8, "\(members.map { meeting.speakers[$0] })")
        #expect(meeting.accuracy(split) > meeting.accuracy(folded))
    }

    /// A voice that speaks once, or a meeting of one voice, gives no split: one run of frames unlike
    /// the rest may as well be one voice drifting.
    @Test func noSplitWithoutAVoiceThatReturns() {
        let script = [(0, 30), (1, 30), (2, 20), (3, 10), (0, 30), (1, 30), (2, 15), (1, 15), (0, 20)]
        let once = SyntheticFrames(speakers: 4, script: script.map { (speaker: $0.0, frames: $0.1) }, centreCosine: 0.8, seed: 7)
        let folded = once.speakers.map { min($0, 2) }
        let kmeans = SmoothedKMeans(once.embeddings), seconds = [Double](repeating: 0.5, count: folded.count)
        let split = kmeans.splittingOffUncountedVoice(folded, seconds: seconds)
        #expect(split == nil)
        // It is the single turn that stops it: the voice is as distinct as the one above.
        var oneTurn = SmoothedKMeans.UncountedVoiceRule.default
        oneTurn.minimumTurns = 1
        let splitOnOneTurn = kmeans.splittingOffUncountedVoice(folded, seconds: seconds, rule: oneTurn)
        #expect(splitOnOneTurn.map { Set($0).count } == 4)
        let alone = SyntheticFrames(speakers: 1, script: [(speaker: 0, frames: 120)], seed: 11)
        let one = SmoothedKMeans(alone.embeddings)
        let oneSplit = one.splittingOffUncountedVoice(one.cluster().labels, seconds: [Double](repeating: 0.5, count: 120))
        #expect(oneSplit == nil)
    }

    @Test func alternatingTurnsAreCountedPairByPair() {
        // 0 and 1 alternate, 1 and 2 alternate, 0 and 2 never do (0 0 2 2 once 1 is left out).
        #expect(SmoothedKMeans.fewestAlternatingTurns([0, 0, 1, 1, 0, 0, 2, 2, 1, 1, 2], 3) == 1)
        #expect(SmoothedKMeans.fewestAlternatingTurns([0, 1, 2, 0, 1, 2], 3) == 2)
        #expect(SmoothedKMeans.fewestAlternatingTurns([0, 0, 0], 1) == 0)
    }

    /// One voice that drifts: its early and late halves each return among another person's turns, so
    /// the turn-taking test counts them as two people; counted pair by pair they never alternate, and
    /// the halves (the nearest pair of centres) stay one speaker.
    @Test(arguments: [PairwiseTurns.nearestPair, .everyPair])
    func aVoiceSplitIntoEarlyAndLateHalvesIsOneSpeaker(pairwise: PairwiseTurns) {
        let script = [(0, 30), (1, 30), (0, 30), (1, 30), (2, 30), (1, 30), (2, 30), (1, 30)].map { (speaker: $0.0, frames: $0.1) }
        let meeting = SyntheticFrames(speakers: 3, script: script, seed: 5, pull: (speaker: 2, toward: 0, share: 0.3))
        let turnTaking = SmoothedKMeans(meeting.embeddings).cluster()
        #expect(turnTaking.count == 3, "costs \(turnTaking.costs)")
        var config = SmoothedKMeans.Config.default
        config.pairwiseTurns = pairwise
        let labels = SmoothedKMeans(meeting.embeddings, config: config).cluster().labels
        #expect(Set(labels).count == 2)
        let halves = meeting.speakers.map { $0 == 2 ? 0 : $0 }
        #expect(SyntheticFrames.agreement(labels, halves) >= 0.95)
    }

    @Test func exactAndBoundedHintsAreObeyed() {
        let meeting = SyntheticFrames(speakers: 3, turns: 12, turnFrames: 20 ... 40, centreCosine: 0.85, seed: 7)
        let kmeans = SmoothedKMeans(meeting.embeddings)
        #expect(kmeans.cluster(minClusters: 2, maxClusters: 2).count == 2)
        #expect(kmeans.cluster(maxClusters: 2).count <= 2)
        let atLeastFour = kmeans.cluster(minClusters: 4)
        #expect(atLeastFour.costs.count >= 4)
        // k = 4 is where the search starts; smoothing may still leave a cluster empty.
        #expect(atLeastFour.count >= 3)
    }

    @Test func smoothingAbsorbsIsolatedFrames() {
        var meeting = SyntheticFrames(speakers: 2, turns: 6, turnFrames: 15 ... 20, centreCosine: 0.85, seed: 3)
        // Every 7th frame is replaced by a frame of the other speaker: one-frame flips are noise, not turns.
        let other = meeting.embeddings.indices.map { index in
            meeting.embeddings.indices.first { meeting.speakers[$0] != meeting.speakers[index] }!
        }
        for index in stride(from: 3, to: meeting.embeddings.count, by: 7) { meeting.embeddings[index] = meeting.embeddings[other[index]] }
        let labels = SmoothedKMeans(meeting.embeddings).cluster(minClusters: 2, maxClusters: 2).labels
        let changes = zip(labels, labels.dropFirst()).filter { $0 != $1 }.count
        #expect(changes == 5)
        #expect(meeting.accuracy(labels) >= 0.95)
    }

    @Test func theSameFramesClusterTheSameWay() {
        let meeting = SyntheticFrames(speakers: 3, turns: 10, turnFrames: 10 ... 30, centreCosine: 0.85, seed: 11)
        #expect(SmoothedKMeans(meeting.embeddings).cluster() == SmoothedKMeans(meeting.embeddings).cluster())
    }

    @Test func degenerateInputs() {
        #expect(SmoothedKMeans([]).cluster().labels.isEmpty)
        #expect(SmoothedKMeans([[1, 0]]).cluster() == .init(labels: [0], count: 1, costs: []))
        let same = SmoothedKMeans(Array(repeating: [0.6, 0.8], count: 20)).cluster()
        #expect(same.count == 1)
        #expect(same.labels == Array(repeating: 0, count: 20))
    }
}

