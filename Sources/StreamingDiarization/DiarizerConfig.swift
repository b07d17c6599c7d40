/// How the streaming diarizer cuts speech into frames, embeds them and decides speakers.
public struct DiarizerConfig: Sendable, Equatable {
    public var sampleRate: Int
    /// Each speech region is cut into frames of this length; a frame is the unit that gets a speaker.
    public var frameSeconds: Double
    /// The audio embedded for a frame: a window of this length centred on it, clipped to its speech
    /// region. Longer windows give steadier embeddings; the half beyond the frame is look-ahead latency.
    public var windowSeconds: Double
    /// Frames whose window holds less speech than this are labelled from their neighbours instead.
    public var minWindowSeconds: Double
    /// Online assignment: cosine distance within which a frame joins an existing speaker
    /// (SpeakerManager's speakerThreshold, for GE2E embeddings). 0.5 was first tuned on ami-dev; 0.45 was
    /// chosen by a sweep on the calibration sets alone (calall's live DER 29.6 % at 0.5, 28.5 % at 0.4
    /// and 0.45, worse either side; final DER the same at every value): docs/accuracy.md.
    public var speakerThreshold: Float
    /// Distance within which a frame also updates the speaker's profile.
    public var embeddingThreshold: Float
    /// Speech needed to create a new speaker online.
    public var minNewSpeakerSeconds: Double
    /// How finalize re-clusters the session.
    public var offlineClustering: OfflineClustering
    /// Average linkage at finalize: clusters are merged while closer than this.
    public var clusterThreshold: Float
    /// Smoothed k-means at finalize: cost of one change of speaker between consecutive frames.
    public var switchPenalty: Float
    /// Smoothed k-means at finalize: one more speaker must lower the smoothed cost by this fraction.
    public var minimumCountGain: Float
    /// Smoothed k-means at finalize, the second way a speaker is kept when its gain is below
    /// `minimumCountGain`: every cluster takes at least two separate turns and every pair of clusters
    /// is coherent in time by this many standard deviations (`SmoothedKMeans.coherence`); 0 turns it off.
    /// Finds close voices that return (3 synthetic voices 0/4 → 4/4 meetings counted exactly, sample.wav
    /// 1 → 2 speakers) without splitting a voice that drifts once (ami-dev unchanged), docs/accuracy.md.
    public var minimumCountCoherence: Float
    /// At finalize the turn-taking test also counts turns pair by pair (`PairwiseTurns`): off by
    /// default, an experiment that did not carry to the report sets (docs/accuracy.md). Live passes
    /// never use it: early in a meeting a real new voice has not alternated with anyone yet.
    public var pairwiseTurns: PairwiseTurns = .off
    /// At finalize a speaker keeps an enrolled person's identity (a permanent known speaker) only if
    /// the centroid of all their frames is within this cosine distance of the person's profile, and a
    /// speaker found in the session takes an enrolled identity only under the same rule. Frame by
    /// frame no threshold both recognises people and keeps others from their name; whole-session
    /// centroids do (docs/accuracy.md, known speakers).
    public var enrolledSpeakerThreshold: Float
    /// Smoothed k-means at finalize, a voice the count left inside another speaker's cluster is split
    /// off (`SmoothedKMeans.splittingOffUncountedVoice`) if it has at least this much speech in at least
    /// two separate turns...
    public var uncountedVoiceSeconds: Double = 4
    /// ...and its frames are on average at least this much more similar (cosine) to their own centre
    /// than to the nearest other; 0 turns the search off. Finds a fourth synthetic voice that says 4 s
    /// (synthetic 4 speakers: count exact 3/4 → 4/4, DER 4.8 → 3.4 %) and dev00's second speaker
    /// (ami-dev DER 27.1 → 25.0 %), and splits nothing else on the sets we measure (docs/accuracy.md).
    public var uncountedVoiceMargin: Float = 0.12
    /// Where a segmentation model heard two voices in one window whose frames the clustering put in one
    /// cluster, one of them is tried as the seed of a split, kept only under the uncounted voice's rule
    /// (`splitOffSegmentedVoice`; needs `StreamingDiarizer.localActivity`). Off: an experiment that did
    /// not carry from the calibration sets to the report sets (see that function).
    public var segmentedVoiceSplit = false
    /// The overlap pass's orphan voice (`OverlapTurns.OrphanVoice`): the local speakers the final turns
    /// leave unnamed become one new speaker if their speech adds up to this much in the session; 0 turns
    /// it off. 4 s is `uncountedVoiceSeconds`' value (the speech any voice needs to be counted), carried
    /// over, not tuned: the calibration meetings have no such voice (their unnamed local speakers talk
    /// 1.7 s at most in a meeting), docs/accuracy.md "A voice heard only over others".
    public var orphanVoiceSeconds: Double = 4
    /// At finalize, cut from the turns every stretch of at least `speakerChangePauseSeconds` that both
    /// the loudness track (a pause, as at a change of speaker) and the overlap pass's segmentation (no
    /// local speaker) hear as silence (`SilenceTrim`); needs the segmentation's windows. Decided on the
    /// calibration meetings only: every one improved (docs/accuracy.md, "Silence both detectors hear").
    public var silenceTrim = true
    /// At finalize, after the silence trim and before the overlapped speech is added, a moment the
    /// segmentation hears one person alone, under a turn of another person the same window tells apart,
    /// goes to the person it hears (`SoloRelabel`), provided both local speakers' names hold more than
    /// this share of their solo frames; 0 turns it off. 0.9 was chosen on the calibration meetings only
    /// (0.5 cost calrl4 1.1 points where segmentation-3.0 merges synthetic voices; 0.85–0.95 are even
    /// with off there), docs/accuracy.md "Changes of speaker where the segmentation hears them".
    public var soloRelabelShare = 0.9
    /// Clusters with less speech than this at finalize are folded into the nearest larger one.
    public var minClusterSeconds: Double
    /// Where two speakers' turns meet inside one stretch of speech, a pause at least this long and
    /// `speakerChangePauseDecibels` below the loudest speech around it, within 1.5 frames of the
    /// change, is taken out of both turns (`LoudnessTrack`): the VAD bridges pauses shorter than its
    /// minimum silence, and a pause between two people is neither's speech. Synthetic meetings, DER
    /// 8.1 / 10.6 / 10.2 % → 3.4 / 4.6 / 5.4 % with 2 / 3 / 4 speakers; ami-dev unchanged (docs/accuracy.md).
    public var speakerChangePauseSeconds: Double = 0.25
    /// 0 turns the pause search off.
    public var speakerChangePauseDecibels: Double = 25
    /// After the offline smoothed k-means, a stretch of speech between pauses (a gap between regions,
    /// or a pause found as for `speakerChangePauseSeconds`) of at least this many frames, labelled as
    /// one speaker, moves to the cluster whose centre without it is nearest (`StretchReassignment`);
    /// 0 turns it off.
    public var minimumStretchFrames: Int = 2
    /// Live re-clustering (StreamingDiarizer+LiveReclustering.swift): once this much speech has been
    /// embedded, finalize's re-clustering runs over the frames so far; when it finds a voice the online
    /// speakers missed, it revises the turns published until then and the online speakers follow its
    /// clusters. 0 turns it off. 10 s was chosen on calibration meetings only (`speakersync-bench
    /// diarize --live-recluster-seconds`, live DER c0.25 on calall / a two-voice set: off 39.7 / 7.1 %,
    /// 3 s 31.0 / 11.4 %, 5 s 28.6 / 10.5 %, 8 s 28.1 / 7.1 %, 10 s 27.5 / 7.1 %, 15 s 28.5 / 7.1 %,
    /// 20 s 29.9 / 7.1 %; docs/accuracy.md). Final DER does not depend on it: finalize re-clusters the
    /// same embeddings (and the clusters keep the numbers their founders had, `ClusterNumbering`).
    public var liveReclusterSeconds: Double = 10
    /// Each next live re-clustering waits until the embedded speech has grown by this factor (and by
    /// `liveReclusterSeconds` at least).
    public var liveReclusterGrowth: Double = 1.5
    /// No live re-clustering past this much embedded speech: the pass costs more the longer the
    /// session, and by then the online speakers are the clusters' (300 s: at most 8 passes).
    public var liveReclusterUntilSeconds: Double = 300
    /// A live re-clustering looks for at least as many voices as one finished window of the overlap
    /// pass's segmentation heard, counting the local speakers that talk alone there for this long each
    /// (`StreamingDiarizer.heard(_:)`); 0 turns the floor off. Why: GE2E puts close voices inside the
    /// count's margin (sample.wav's two people are 0.09 apart), so a live pass early in a session finds
    /// one voice where the segmentation, trained to tell the people of one window apart, hears two.
    /// A window that raises the floor above the online speakers calls a pass at once. 1 s was set
    /// before measuring, not tuned: on the calibration meetings (calall, calib2) every value from 0.5 to
    /// 3 s leaves live DER as it was (their online speakers already hold every voice a window hears
    /// alone), so they cannot choose one; measured once on the report sets, docs/accuracy.md "A count
    /// floor from the segmentation, live".
    public var liveSoloSpeakerSeconds: Double = 1
    /// A re-clustering's clusters take online speakers' numbers first by who founded each number: the
    /// voice of its first `ClusterNumbering.foundingSeconds` (ClusterNumbering). 0 matches by shared
    /// speech alone, as before: the number then goes to whoever talked most under it, which renamed
    /// the first voice wherever a later one had talked more before the pass (docs/accuracy.md,
    /// "Speaker numbers that stay"). Kept as a setting so the bench can measure both in one run.
    public var numberFoundingSeconds: Double = ClusterNumbering.foundingSeconds
    /// Audio kept for windows (seconds); older audio is never needed again.
    public var audioHistorySeconds: Double
    /// The windows of frames shed under load (`StreamingDiarizer.embeddingStride`) are kept, as 16-bit
    /// audio, for finalize to embed, so the final labels are as good as without shedding; at most this
    /// many seconds of distinct audio per session (120 s: 3.8 MB; `ShedAudio` keeps the union of the
    /// windows, which overlap). Frames shed beyond it keep their neighbours' labels at finalize too.
    /// Measured: shedding every other frame with nothing kept doubles final DER (sample 10.0 → 21.0 %
    /// with the count given, docs/benchmarks.md).
    public var shedRetentionSeconds: Double = 120
    /// Frames are embedded once this many are waiting (or their speech ended). 1 by default: a frame
    /// is embedded as soon as its look-ahead is in. With 2 (the default until issue 31) every other
    /// frame waited half a second for its partner, which was most of the label latency a device sees
    /// (`sessions --provider speakerkit --levels 10`: label p95 221 ms with 2, 13 ms with 1), for an
    /// encoder call of two windows instead of one (GE2E: 9.8 against 11.3 ms per window). Under load
    /// the worker gathers many sessions' frames into one call anyway (`DiarizerBatch`).
    public var minimumBatch: Int
    /// Audio is handed to the VAD, and frames are scheduled, once this much has arrived since the last
    /// time, or as soon as the open stretch of speech has its next batch of frames due (finalize takes
    /// the rest); 0: on every push. A device sends 100 ms chunks, and at real-time pace every call finds
    /// the VAD's model and code cold after the thread slept. Blocks make fewer, longer calls, while
    /// the batch trigger keeps ongoing speech labelled exactly as soon as with no block: what waits for
    /// a block is only the VAD's own news, where speech starts and ends (at most 0.5 s later). Eval at
    /// real-time pace, synthetic 2 speakers: RTF 0.0227 → 0.0198, first-label p95 0.21 → 0.22 s
    /// (docs/accuracy.md). The VAD still sees every 32 ms window, so its decisions do not change.
    public var analysisBlockSeconds: Double

    public init(sampleRate: Int = 16_000, frameSeconds: Double = 0.5, windowSeconds: Double = 1.5,
                minWindowSeconds: Double = 0.4, speakerThreshold: Float = 0.45, embeddingThreshold: Float = 0.3,
                minNewSpeakerSeconds: Double = 1.0, offlineClustering: OfflineClustering = .smoothedKMeans,
                clusterThreshold: Float = 0.3, switchPenalty: Float = 0.3, minimumCountGain: Float = 0.08, minimumCountCoherence: Float = 2, minClusterSeconds: Double = 1.0, enrolledSpeakerThreshold: Float = 0.1,
                audioHistorySeconds: Double = 8, minimumBatch: Int = 1, analysisBlockSeconds: Double = 0.5) {
        self.sampleRate = sampleRate
        self.frameSeconds = frameSeconds
        self.windowSeconds = windowSeconds
        self.minWindowSeconds = minWindowSeconds
        self.speakerThreshold = speakerThreshold
        self.embeddingThreshold = embeddingThreshold
        self.minNewSpeakerSeconds = minNewSpeakerSeconds
        self.offlineClustering = offlineClustering
        self.clusterThreshold = clusterThreshold
        self.switchPenalty = switchPenalty
        self.minimumCountGain = minimumCountGain
        self.minimumCountCoherence = minimumCountCoherence
        self.minClusterSeconds = minClusterSeconds
        self.enrolledSpeakerThreshold = enrolledSpeakerThreshold
        self.audioHistorySeconds = audioHistorySeconds
        self.minimumBatch = minimumBatch
        self.analysisBlockSeconds = analysisBlockSeconds
    }

    public static let `default` = DiarizerConfig()

    /// Look-ahead a frame waits for before it is embedded.
    var lookaheadSeconds: Double { max(0, (windowSeconds - frameSeconds) / 2) }
}

/// The offline pass at finalize.
public enum OfflineClustering: String, Sendable, Equatable, CaseIterable {
    /// Spherical k-means smoothed in time, count chosen by cost gain (see `SmoothedKMeans`).
    case smoothedKMeans = "smoothed_kmeans"
    /// Average-linkage agglomerative clustering with `clusterThreshold`.
    case agglomerative
}

/// Speaker-count hints from the session's start options: `num_speakers`, `min_speakers`, `max_speakers`.
public struct SpeakerCountHint: Sendable, Equatable {
    public var exact: Int?
    public var minimum: Int?
    public var maximum: Int?

    public init(exact: Int? = nil, minimum: Int? = nil, maximum: Int? = nil) {
        self.exact = exact
        self.minimum = minimum
        self.maximum = maximum
    }

    public static let none = SpeakerCountHint()

    /// The most speakers allowed, if any bound applies.
    var upperBound: Int? { exact ?? maximum }
    /// The fewest speakers wanted, if any bound applies.
    var lowerBound: Int? { exact ?? minimum }
}
