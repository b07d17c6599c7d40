import Foundation
import SpeakerSyncStore

/// Why a speaker correction was refused.
public struct SpeakerRegistryError: Error, Sendable, Equatable {
    public enum Code: String, Sendable { case unknownSpeaker = "unknown_speaker", invalidName = "invalid_name", invalidMerge = "invalid_merge" }
    public var code: Code
    public var message: String
}

/// Maps the speaker keys a provider reports to the session's stable labels.
///
/// Providers number their clusters however they like ("0", "spk_3", the device's "speaker90"), may
/// restart numbering after a reconnect, and may relabel. Users must see "Speaker 1" stay the same
/// person, so labels are owned here: a key gets the next free label the first time it is heard, and
/// the key → label map is persisted with the conversation so a resumed session continues it.
/// Corrections (rename, merge) act on labels; a merged label forwards to its target, so turns that
/// the provider still reports under the old key land on the merged speaker.
public struct SpeakerRegistry: Sendable {
    public private(set) var speakers: [SessionSpeaker] = []
    /// Provider key ("provider/key") → label as first assigned (before merges are followed).
    public private(set) var keyLabels: [String: String] = [:]
    private var indexByLabel: [String: Int] = [:]

    public init() {}

    /// Restores the state of an earlier session of the same conversation.
    public init(speakers: [SessionSpeaker], keyLabels: [String: String]) {
        for speaker in speakers { insert(speaker) }
        self.keyLabels = keyLabels
    }

    public func speaker(_ label: String) -> SessionSpeaker? {
        indexByLabel[label].map { speakers[$0] }
    }

    /// The label a provider key maps to, following merges; assigns a new label on first sight.
    /// - Returns: the resolved label and the speakers created or changed by this call (to persist).
    public mutating func label(provider: String, key: String, heardAtSeconds: Double) -> (label: String, created: SessionSpeaker?) {
        let scoped = "\(provider)/\(key)"
        if let label = keyLabels[scoped] {
            return (resolve(label), nil)
        }
        let label = "Speaker \(nextNumber())"
        let speaker = SessionSpeaker(label: label, firstSeenSeconds: heardAtSeconds)
        insert(speaker)
        keyLabels[scoped] = label
        return (label, speaker)
    }

    /// Binds a provider key to an existing label (a known voice from an earlier session), so turns
    /// under that key continue the same speaker.
    public mutating func bind(provider: String, key: String, to label: String) {
        guard indexByLabel[label] != nil else { return }
        keyLabels["\(provider)/\(key)"] = label
    }

    /// Follows merged_into links to the speaker that now owns `label` (cycles are impossible: merge refuses them).
    public func resolve(_ label: String) -> String {
        var current = label
        var hops = 0
        while let index = indexByLabel[current], let next = speakers[index].mergedInto, hops < speakers.count {
            current = next
            hops += 1
        }
        return current
    }

    public mutating func rename(_ label: String, to name: String) throws(SpeakerRegistryError) -> SessionSpeaker {
        guard let index = indexByLabel[label] else {
            throw SpeakerRegistryError(code: .unknownSpeaker, message: "no speaker labelled '\(label)' in this conversation")
        }
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 200 else {
            throw SpeakerRegistryError(code: .invalidName, message: "a speaker name must have 1 to 200 characters")
        }
        speakers[index].displayName = trimmed
        return speakers[index]
    }

    /// Merges `from` into `into`: both must exist and be distinct after following earlier merges.
    /// - Returns: the resolved source and target labels.
    public mutating func merge(_ from: String, into: String) throws(SpeakerRegistryError) -> (from: String, into: String) {
        guard indexByLabel[from] != nil else {
            throw SpeakerRegistryError(code: .unknownSpeaker, message: "no speaker labelled '\(from)' in this conversation")
        }
        guard indexByLabel[into] != nil else {
            throw SpeakerRegistryError(code: .unknownSpeaker, message: "no speaker labelled '\(into)' in this conversation")
        }
        let source = resolve(from)
        let target = resolve(into)
        guard source != target else {
            throw SpeakerRegistryError(code: .invalidMerge, message: "'\(from)' and '\(into)' are already the same speaker")
        }
        speakers[indexByLabel[source]!].mergedInto = target
        if speakers[indexByLabel[target]!].displayName == nil, let name = speakers[indexByLabel[source]!].displayName {
            speakers[indexByLabel[target]!].displayName = name
        }
        return (source, target)
    }

    /// Display name for a label as transcripts show it (after merges).
    public func name(for label: String?) -> String? {
        guard let label else { return nil }
        return speaker(resolve(label))?.name ?? label
    }

    /// Speakers that are not merged away, in label order.
    public var activeSpeakers: [SessionSpeaker] { speakers.filter { $0.mergedInto == nil } }

    private mutating func insert(_ speaker: SessionSpeaker) {
        indexByLabel[speaker.label] = speakers.count
        speakers.append(speaker)
    }

    private func nextNumber() -> Int {
        let used = speakers.compactMap { Int($0.label.split(separator: " ").last ?? "") }
        return (used.max() ?? 0) + 1
    }
}
