/// A call into a provider, as the watchdog names it.
public enum ProviderCall: String, Sendable, Hashable, CaseIterable {
    case load = "loading the plugin"
    case checkOptions = "check_options"
    case create = "create"
    case push = "push_audio"
    case finalize = "finalize"
    case embedVoice = "embed_voice"
}

/// How long each call into a provider may take before its worker is killed as hung. `.default`:
/// load 60 s (spawn, dlopen, init: model files are read here), create (and check_options) 30 s,
/// push_audio 10 s (one chunk with its pull), finalize 120 s (the offline pass over a long meeting),
/// embed_voice 60 s.
public struct ProviderDeadlines: Sendable, Hashable {
    public var loadSeconds: Double
    public var createSeconds: Double
    public var pushSeconds: Double
    public var finalizeSeconds: Double
    public var embedVoiceSeconds: Double

    public init(loadSeconds: Double, createSeconds: Double, pushSeconds: Double, finalizeSeconds: Double, embedVoiceSeconds: Double) {
        self.loadSeconds = loadSeconds
        self.createSeconds = createSeconds
        self.pushSeconds = pushSeconds
        self.finalizeSeconds = finalizeSeconds
        self.embedVoiceSeconds = embedVoiceSeconds
    }

    public static let `default` = ProviderDeadlines(loadSeconds: 60, createSeconds: 30, pushSeconds: 10, finalizeSeconds: 120, embedVoiceSeconds: 60)

    public func seconds(for call: ProviderCall) -> Double {
        switch call {
        case .load: loadSeconds
        case .create, .checkOptions: createSeconds
        case .push: pushSeconds
        case .finalize: finalizeSeconds
        case .embedVoice: embedVoiceSeconds
        }
    }
}

/// The calls one instance has handed to its worker and not had answered, oldest first, and when the
/// last answer came. A worker runs an instance's calls one at a time in order, so the oldest call began
/// running when it was sent or when the call before it was answered, whichever is later: that is what
/// its deadline counts from, so calls queued behind a slow one are not blamed for its time. Pure:
/// times are given.
struct CallLedger: Sendable {
    struct Entry: Sendable, Hashable {
        var call: ProviderCall
        var sentAt: Double
        var sampleCount: Int
    }

    private var entries: [Entry] = []
    private var head = 0
    private var lastAnswerAt: Double?
    /// Samples handed over in push calls not yet answered.
    private(set) var pendingSampleCount = 0

    var isEmpty: Bool { head == entries.count }
    var oldest: Entry? { isEmpty ? nil : entries[head] }

    mutating func sent(_ call: ProviderCall, at now: Double, sampleCount: Int = 0) {
        entries.append(Entry(call: call, sentAt: now, sampleCount: sampleCount))
        pendingSampleCount += sampleCount
    }

    /// The oldest call was answered at `now`; returns it (nil when nothing was outstanding).
    mutating func answered(at now: Double) -> Entry? {
        guard !isEmpty else { return nil }
        let entry = entries[head]
        head += 1
        pendingSampleCount -= entry.sampleCount
        lastAnswerAt = now
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
        return entry
    }

    /// Forget every outstanding call (the instance failed; the worker answers none of them).
    mutating func abandon() {
        entries.removeAll()
        head = 0
        pendingSampleCount = 0
    }

    /// The oldest call and how long it has been running, when that exceeds its deadline.
    func overdue(at now: Double, deadlines: ProviderDeadlines) -> (call: ProviderCall, runningSeconds: Double)? {
        guard let entry = oldest else { return nil }
        let began = max(entry.sentAt, lastAnswerAt ?? entry.sentAt)
        let running = now - began
        return running > deadlines.seconds(for: entry.call) ? (entry.call, running) : nil
    }
}
