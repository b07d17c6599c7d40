import CSpeakerSyncPluginABI

/// What the host may read of a plugin's tables. Tables only grow at the end, so a member exists when
/// the table's struct_size reaches past it (the C side's SPEAKERSYNC_HAS_MEMBER). Revision 1 is the
/// first ABI 1 layout; revision 2 added known speakers, speaker profiles and voice embedding; revision 3
/// the factory's check_options; revision 4 provider configuration and availability; revision 5 the
/// host's backlog_seconds; revision 6 the factory's push_audio_many.
enum ABIRevision {
    /// speakersync_instance_t as ABI 1 revision 1 defined it: up to and including `destroy`.
    static let instanceV1Size = MemoryLayout<speakersync_instance_t>.offset(of: \.speaker_profile)!
    /// speakersync_factory_t revision 1: up to and including `create`.
    static let factoryV1Size = MemoryLayout<speakersync_factory_t>.offset(of: \.embed_voice)!

    static func has<Table, Member>(_ structSize: UInt32, _ member: KeyPath<Table, Member>) -> Bool {
        guard let offset = MemoryLayout<Table>.offset(of: member) else { return false }
        return Int(structSize) >= offset + MemoryLayout<Member>.size
    }
}
