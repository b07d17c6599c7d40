import CSpeakerSyncPluginABI

/// The factory members of every Swift provider's table: C function pointers that find the provider
/// through `PluginEntryTables.provider(_:)`.
enum PluginFactoryCalls {
    static let create: @convention(c) (UnsafePointer<speakersync_factory_t>?, UnsafePointer<speakersync_instance_config_t>?,
                                       UnsafeMutablePointer<CChar>?, Int) -> UnsafeMutablePointer<speakersync_instance_t>? = {
        factory, config, errorBuffer, size in
        guard let provider = PluginEntryTables.provider(factory) else {
            writeMessage(errorBuffer, size, "the plugin is not initialised")
            return nil
        }
        guard let config, Int(config.pointee.struct_size) >= MemoryLayout<speakersync_instance_config_t>.offset(of: \.known_speakers)! else {
            writeMessage(errorBuffer, size, "instance config missing or too small")
            return nil
        }
        guard config.pointee.sample_rate == SPEAKERSYNC_SAMPLE_RATE else {
            writeMessage(errorBuffer, size, "sample_rate \(config.pointee.sample_rate) is not supported (only 16000)")
            return nil
        }
        let request = PluginSessionRequest(
            sessionID: config.pointee.session_id.map { String(cString: $0) } ?? "",
            sampleRate: Int(config.pointee.sample_rate),
            optionsJSON: config.pointee.options_json.map { String(cString: $0) },
            knownSpeakers: knownSpeakers(config))
        do throws(PluginFailure) {
            return PluginInstanceCalls.table(for: try provider.makeSession(request))
        } catch {
            writeMessage(errorBuffer, size, error.message)
            return nil
        }
    }

    static let checkOptions: @convention(c) (UnsafePointer<speakersync_factory_t>?, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int)
        -> speakersync_status_t = { factory, options, errorBuffer, size in
        guard let provider = PluginEntryTables.provider(factory) else { return SPEAKERSYNC_ERR_BAD_STATE }
        do throws(PluginFailure) {
            try provider.checkOptions(options.map { String(cString: $0) })
            return SPEAKERSYNC_OK
        } catch {
            writeMessage(errorBuffer, size, error.message)
            return error.kind.status
        }
    }

    static let availability: @convention(c) (UnsafePointer<speakersync_factory_t>?, UnsafeMutablePointer<CChar>?, Int) -> speakersync_status_t = {
        factory, reason, size in
        guard let provider = PluginEntryTables.provider(factory) else { return SPEAKERSYNC_ERR_BAD_STATE }
        guard let why = provider.unavailableReason() else { return SPEAKERSYNC_OK }
        writeMessage(reason, size, why)
        return SPEAKERSYNC_ERR_UNAVAILABLE
    }

    static let embedVoice: @convention(c) (UnsafePointer<speakersync_factory_t>?, UnsafePointer<Float>?, Int, UnsafeMutablePointer<Float>?, Int,
                                           UnsafeMutablePointer<Int>?, UnsafeMutablePointer<CChar>?, Int) -> speakersync_status_t = {
        factory, samples, count, out, capacity, dimension, errorBuffer, size in
        guard let provider = PluginEntryTables.provider(factory) else { return SPEAKERSYNC_ERR_BAD_STATE }
        guard let samples, count > 0, let out, let dimension else {
            writeMessage(errorBuffer, size, "embed_voice: missing audio or output buffer")
            return SPEAKERSYNC_ERR_INVALID_ARGUMENT
        }
        let audio = UnsafeBufferPointer(start: samples, count: count)
        guard audio.allSatisfy(\.isFinite) else {
            writeMessage(errorBuffer, size, "embed_voice: the audio has non-finite samples")
            return SPEAKERSYNC_ERR_INVALID_ARGUMENT
        }
        do throws(PluginFailure) {
            let embedding = try provider.embedVoice(audio)
            guard embedding.count <= capacity else {
                writeMessage(errorBuffer, size, "embed_voice: the embedding has \(embedding.count) values, room for \(capacity)")
                return SPEAKERSYNC_ERR_INVALID_ARGUMENT
            }
            for (index, value) in embedding.enumerated() { out[index] = value }
            dimension.pointee = embedding.count
            return SPEAKERSYNC_OK
        } catch {
            writeMessage(errorBuffer, size, error.message)
            return error.kind.status
        }
    }

    /// Revision 6's push_audio_many: each instance admitted as push_audio admits it, the admitted ones
    /// pushed together through the provider's `push(many:)`.
    static let pushAudioMany: @convention(c) (UnsafePointer<speakersync_factory_t>?, UnsafePointer<UnsafeMutablePointer<speakersync_instance_t>?>?,
                                              UnsafePointer<UnsafePointer<Float>?>?, UnsafePointer<Int>?, Int,
                                              UnsafeMutablePointer<speakersync_status_t>?) -> Void = {
        factory, instances, samples, counts, count, statuses in
        guard let statuses, count > 0 else { return }
        guard let provider = PluginEntryTables.provider(factory), let instances, let samples, let counts else {
            for index in 0 ..< count { statuses[index] = SPEAKERSYNC_ERR_INVALID_ARGUMENT }
            return
        }
        var admitted: [(index: Int, box: PluginInstanceBox, samples: UnsafeBufferPointer<Float>)] = []
        for index in 0 ..< count {
            guard let box = PluginInstanceCalls.box(instances[index]) else {
                statuses[index] = SPEAKERSYNC_ERR_INVALID_ARGUMENT
                continue
            }
            switch box.admit(samples[index], counts[index]) {
            case .refused(let status): statuses[index] = status
            case .nothing: statuses[index] = SPEAKERSYNC_OK
            case .push(let buffer): admitted.append((index, box, buffer))
            }
        }
        guard !admitted.isEmpty else { return }
        let failures = provider.push(many: admitted.map { ($0.box.session, $0.samples) })
        for (position, item) in admitted.enumerated() {
            // A provider that answers for fewer pushes than it was given fails the rest, never leaves them unset.
            let failure = position < failures.count ? failures[position] : PluginFailure(.internalError, "push_audio_many: no result for this instance")
            statuses[item.index] = failure.map { item.box.fail($0) } ?? item.box.pushed()
        }
    }

    /// Revision 2's known speakers, copied out of the host's borrowed array.
    private static func knownSpeakers(_ config: UnsafePointer<speakersync_instance_config_t>) -> [PluginKnownSpeaker] {
        let hasKnown = Int(config.pointee.struct_size)
            >= MemoryLayout<speakersync_instance_config_t>.offset(of: \.known_speaker_count)! + MemoryLayout<Int>.size
        guard hasKnown, let array = config.pointee.known_speakers else { return [] }
        return (0 ..< config.pointee.known_speaker_count).compactMap { index -> PluginKnownSpeaker? in
            let known = array[index]
            guard let embedding = known.embedding, known.dimension > 0, known.speaker >= 0 else { return nil }
            let vector = Array(UnsafeBufferPointer(start: embedding, count: Int(known.dimension)))
            guard vector.allSatisfy(\.isFinite) else { return nil }
            return PluginKnownSpeaker(
                speaker: known.speaker, embedding: vector, seconds: max(0, known.duration_seconds),
                isPermanent: known.flags & SPEAKERSYNC_KNOWN_PERMANENT != 0, name: known.name.map { String(cString: $0) })
        }
    }
}
