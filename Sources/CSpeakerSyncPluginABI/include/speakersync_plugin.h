/*
 * speakersync_plugin.h — the SpeakerSync diarization provider ABI, version 1.
 *
 * A provider plugin is a shared library (libNAME.so) that exports exactly ONE symbol:
 *
 *     const speakersync_plugin_entry_t *speakersync_plugin_entry(void);
 *
 * The host dlopen()s every *.so in its plugins folder (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE), looks that symbol up,
 * checks the returned table's struct_size and abi_version, calls init() with a host callback table,
 * then asks for the plugin's factories (one per provider it offers). Each factory describes a provider
 * and creates one instance per session; the host pushes the session's audio into the instance and pulls
 * speaker turns out of it.
 *
 * Plain C99. No host symbols are imported by plugins: everything a plugin may ask of the host goes through
 * the speakersync_host_t table it is given in init().
 *
 * VERSIONING
 *   - Every table that may grow starts with `uint32_t struct_size` (sizeof the table as the side that
 *     filled it in was compiled). Tables only ever grow AT THE END; existing members never move or change
 *     type. A reader must check struct_size before touching a member added after version 1 (see
 *     SPEAKERSYNC_HAS_MEMBER). There is no reserved space: struct_size is the version gate.
 *   - abi_version changes only for incompatible changes (a member removed or changed, or a fixed-layout
 *     struct such as speakersync_turn_t changed). A host rejects a plugin whose abi_version differs from
 *     SPEAKERSYNC_PLUGIN_ABI_VERSION.
 *   - speakersync_turn_t has no struct_size: its layout is fixed for an ABI version.
 *
 * THREADS
 *   - "loader thread": the host thread that loads the plugin. It calls speakersync_plugin_entry, init,
 *     get_factory_count, get_factory and describe, once each per factory, before any instance exists, and
 *     deinit once, after every instance has been destroyed.
 *   - "session queue": each session runs on its own serial queue. All calls on one instance (create and
 *     every instance-table member) are made from that session's queue: never concurrently for one instance,
 *     though not necessarily always from the same OS thread. DIFFERENT instances are called concurrently
 *     from different threads, so a plugin keeps all mutable state in its instance (no mutable globals)
 *     or guards shared state itself.
 *
 * OWNERSHIP
 *   Written beside every pointer below. The short version: strings and tables a plugin returns are owned by
 *   the plugin; buffers the host passes in are owned by the host and only borrowed for the call.
 *
 * ERRORS
 *   Instance calls return a speakersync_status_t: SPEAKERSYNC_OK (0) or a negative error code. After an
 *   error, last_error(inst) gives a human-readable UTF-8 message.
 */
#ifndef SPEAKERSYNC_PLUGIN_H
#define SPEAKERSYNC_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. Bumped only for incompatible changes. */
#define SPEAKERSYNC_PLUGIN_ABI_VERSION 1u

/** The name of the single symbol a plugin exports (for dlsym). */
#define SPEAKERSYNC_PLUGIN_ENTRY_SYMBOL "speakersync_plugin_entry"

/** The only sample format a host sends in ABI v1: 16000 Hz, mono, float32 in [-1, 1]. */
#define SPEAKERSYNC_SAMPLE_RATE 16000u

/** Mark the entry function exported even when the plugin is built with -fvisibility=hidden. */
#if defined(_WIN32)
#define SPEAKERSYNC_PLUGIN_EXPORT __declspec(dllexport)
#else
#define SPEAKERSYNC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/**
 * True when a table of type `type` filled in by the other side (whose size it reports in `struct_size`)
 * contains `member`. Use before reading any member added after version 1.
 */
#define SPEAKERSYNC_HAS_MEMBER(ptr, type, member) \
    ((ptr)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* ------------------------------------------------------------------------------------------------ */
/* Status codes                                                                                      */
/* ------------------------------------------------------------------------------------------------ */

/** OK is 0, errors are negative. Plugins may return other negative values; hosts treat them as errors. */
typedef int32_t speakersync_status_t;
#define SPEAKERSYNC_OK 0
#define SPEAKERSYNC_ERR_INVALID_ARGUMENT (-1) /**< NULL pointer, bad count, non-finite sample, bad option. */
#define SPEAKERSYNC_ERR_BAD_STATE (-2)        /**< e.g. push_audio after finalize. */
#define SPEAKERSYNC_ERR_OUT_OF_MEMORY (-3)
#define SPEAKERSYNC_ERR_UNSUPPORTED (-4)      /**< e.g. a sample rate the plugin cannot handle. */
#define SPEAKERSYNC_ERR_INTERNAL (-5)
#define SPEAKERSYNC_ERR_UNAVAILABLE (-6)     /**< revision 4: the provider cannot serve (see availability). */

/* ------------------------------------------------------------------------------------------------ */
/* Host callback table                                                                               */
/* ------------------------------------------------------------------------------------------------ */

/** Log levels for speakersync_host_t.log. */
typedef enum speakersync_log_level {
    SPEAKERSYNC_LOG_DEBUG = 0,
    SPEAKERSYNC_LOG_INFO = 1,
    SPEAKERSYNC_LOG_WARNING = 2,
    SPEAKERSYNC_LOG_ERROR = 3
} speakersync_log_level_t;

/**
 * What the host offers the plugin. Owned by the host; the pointer given to init() stays valid until
 * deinit() has returned, so a plugin may keep it.
 */
typedef struct speakersync_host {
    /** sizeof(speakersync_host_t) as the host was compiled. Check before reading members beyond v1. */
    uint32_t struct_size;
    /** The host's SPEAKERSYNC_PLUGIN_ABI_VERSION. */
    uint32_t abi_version;
    /** Opaque to the plugin; the host's own context for the callbacks below. Owned by the host. */
    void *host_data;
    /**
     * Write a line to the host's log. `message` is UTF-8, NUL-terminated, owned by the plugin and borrowed
     * only for the call (the host copies it). Thread: any thread on which the host is currently calling
     * into the plugin (loader thread or a session queue); the host makes it safe to call concurrently.
     * Never NULL in v1. `level` is a speakersync_log_level_t.
     */
    void (*log)(const struct speakersync_host *host, int32_t level, const char *message);

    /* ---- ABI 1, revision 4: read only if SPEAKERSYNC_HAS_MEMBER(host, speakersync_host_t, provider_config) ---- */

    /**
     * The operator's configuration for provider `provider_id` (one of this plugin's descriptor ids), as a
     * UTF-8 JSON object, NUL-terminated: the provider's section of the server's provider config file
     * (`speakersync serve --provider-config FILE`), or NULL when the file has none. Sessions never see
     * it: it is where model paths and secrets (access keys) belong, never in a session's options. It may
     * hold secrets: never log it, copy it into errors, or report it back. Owned by the host, valid until
     * deinit() returns. Thread: any thread on which the host is calling into the plugin. A plugin may
     * also read environment variables of its own (the host passes a curated environment, never a
     * secret). A host that isolates plugins may load a plugin once with every call answering NULL, to
     * learn the ids it declares, then deinit it and load it again with the sections of those ids only:
     * a plugin must load without its configuration (listing its providers as unavailable).
     */
    const char *(*provider_config)(const struct speakersync_host *host, const char *provider_id);

    /* ---- ABI 1, revision 5: read only if SPEAKERSYNC_HAS_MEMBER(host, speakersync_host_t, backlog_seconds) ---- */

    /**
     * How far behind the host is in handing this plugin its audio: the seconds the push now starting
     * waited in the host's queue after the audio arrived (0 when pushes run as they arrive, or when
     * the host does not measure it). The same value for every instance of the plugin: it is the
     * process's load, not one session's. A plugin may do less per second of audio while it is high
     * (a wider step, fewer embeddings), so that turns stay near real time instead of lagging ever
     * further; it must still label all of the audio. Thread: any thread on which the host is calling
     * into the plugin; cheap (a load of a number), so it may be read on every push. May be NULL.
     */
    double (*backlog_seconds)(const struct speakersync_host *host);
} speakersync_host_t;

/* ------------------------------------------------------------------------------------------------ */
/* Speaker turns                                                                                     */
/* ------------------------------------------------------------------------------------------------ */

/** speakersync_turn_t.flags: this turn id is withdrawn; the host forgets the turn (times are ignored). */
#define SPEAKERSYNC_TURN_REMOVED 0x1u

/**
 * One speaker turn, written by the plugin into a host-owned array in pull_turns. Fixed layout for ABI v1
 * (no struct_size). Times are seconds on the instance's audio timeline: sample index / sample_rate, where
 * sample 0 is the first sample pushed.
 */
typedef struct speakersync_turn {
    /** Plugin-chosen id, unique within the instance. Sending the same id again REVISES that turn
     *  (new times, speaker or confidence replace the old ones). */
    uint64_t turn_id;
    /** Provider-local speaker (cluster) index, >= 0, stable within the instance. The host maps it to its
     *  own session labels. */
    int32_t speaker;
    /** 0 <= start_seconds <= end_seconds, both finite; a host drops turns it cannot use, with a warning. */
    double start_seconds;
    double end_seconds;
    /** In [0, 1]; the plugin's confidence in the speaker attribution. */
    float confidence;
    /** Bit set of SPEAKERSYNC_TURN_*; 0 for an ordinary turn. */
    uint32_t flags;
} speakersync_turn_t;

/* ------------------------------------------------------------------------------------------------ */
/* Instance                                                                                          */
/* ------------------------------------------------------------------------------------------------ */

/**
 * Per-instance configuration, passed to create(). Owned by the host and borrowed only for the call: the
 * plugin copies whatever it keeps.
 */
/**
 * A speaker the instance should recognise from its first sample (added in ABI 1, revision 2): an
 * enrolled person, or a speaker of the same conversation from before a reconnect. Host-owned; the
 * array, the embeddings and the names are borrowed for create() only (copy what you keep).
 */
#define SPEAKERSYNC_KNOWN_PERMANENT 0x1u

typedef struct speakersync_known_speaker {
    /** The provider-local speaker index the plugin must use in turns for this speaker (>= 0). Host-chosen;
     *  the plugin numbers the speakers it finds itself above every known index. */
    int32_t speaker;
    /** Bit set of SPEAKERSYNC_KNOWN_*. PERMANENT: an enrolled person, never merged into another speaker. */
    uint32_t flags;
    /** `dimension` floats in the plugin's own embedding space, as speaker_profile()/embed_voice() gave them. */
    const float *embedding;
    uint32_t dimension;
    /** Seconds of speech behind the embedding. */
    double duration_seconds;
    /** Display name (UTF-8, NUL-terminated) for the plugin's logs, or NULL. */
    const char *name;
} speakersync_known_speaker_t;

typedef struct speakersync_instance_config {
    /** sizeof(speakersync_instance_config_t) as the host was compiled. */
    uint32_t struct_size;
    /** Samples per second of the audio pushed. ABI v1 hosts always send SPEAKERSYNC_SAMPLE_RATE
     *  (16000, mono, float32); a plugin may still reject other values. */
    uint32_t sample_rate;
    /** The session's provider options as a UTF-8 JSON object (NUL-terminated), or NULL / "" for none. */
    const char *options_json;
    /** The host's session id (UTF-8, NUL-terminated), for the plugin's log lines only. Never NULL. */
    const char *session_id;

    /* ---- ABI 1, revision 2: read only if SPEAKERSYNC_HAS_MEMBER(cfg, speakersync_instance_config_t, ...) ---- */

    /** Speakers to recognise from the start (see speakersync_known_speaker_t); NULL when the count is 0.
     *  A plugin without speaker embeddings ignores them. */
    const speakersync_known_speaker_t *known_speakers;
    size_t known_speaker_count;
} speakersync_instance_config_t;

/**
 * A provider instance: one per session, created by a factory. The plugin allocates it (usually embedded at
 * the start of its own per-instance struct) and frees it in destroy(). Every member is called on the
 * session's serial queue (see THREADS), never concurrently for one instance.
 */
typedef struct speakersync_instance {
    /** sizeof(speakersync_instance_t) as the plugin was compiled. The host checks it after create(). */
    uint32_t struct_size;
    /** Opaque to the host; the plugin's own per-instance data. Owned by the plugin. */
    void *instance_data;

    /**
     * Feed `count` mono float32 samples (at config.sample_rate) that follow the previously pushed ones.
     * `samples` is owned by the host and borrowed only for the call (copy what you keep). count may be 0.
     * Returns SPEAKERSYNC_OK or an error (then last_error explains); after an error the host destroys the
     * instance. SPEAKERSYNC_ERR_BAD_STATE after finalize.
     */
    speakersync_status_t (*push_audio)(struct speakersync_instance *inst, const float *samples, size_t count);

    /**
     * Copy up to `capacity` pending turns into the host-owned array `out` and set *written to how many.
     * Each turn is either new, a revision of an id sent before (same turn_id), or a removal
     * (SPEAKERSYNC_TURN_REMOVED). A pulled turn is not returned again unless revised. The host repeats the
     * call until *written < capacity; then nothing is pending. The plugin may coalesce several revisions
     * of one id into the latest. Called after push_audio and after finalize.
     */
    speakersync_status_t (*pull_turns)(struct speakersync_instance *inst, speakersync_turn_t *out,
                                       size_t capacity, size_t *written);

    /**
     * No more audio will come. The plugin closes open turns and may revise or remove ANY turn it sent;
     * the host then pulls turns again (until *written < capacity). Called at most once; after it only
     * pull_turns, last_error and destroy are called.
     */
    speakersync_status_t (*finalize)(struct speakersync_instance *inst);

    /**
     * A UTF-8, NUL-terminated description of the last error on this instance, or "" when none. Owned by the
     * instance; valid until the next call on the instance. Never NULL.
     */
    const char *(*last_error)(const struct speakersync_instance *inst);

    /**
     * Free the instance and everything it owns (including the memory `inst` points to). Called exactly once;
     * `inst` is dangling afterwards. Called from the session queue, possibly without finalize first (the
     * session was dropped).
     */
    void (*destroy)(struct speakersync_instance *inst);

    /* ---- ABI 1, revision 2: NULL or absent (check struct_size) in plugins without speaker embeddings ---- */

    /**
     * Copy the current voice profile of provider speaker `speaker` (an index it used in turns, or a known
     * speaker's) into the host-owned `out` (capacity floats) and set *dimension and *duration_seconds (speech
     * behind it). The host stores it to recognise the speaker after a reconnect, or to save them as a person.
     * Thread: the session queue, like every instance call; also after finalize. Returns
     * SPEAKERSYNC_ERR_INVALID_ARGUMENT for an unknown speaker or a capacity below the dimension.
     */
    speakersync_status_t (*speaker_profile)(struct speakersync_instance *inst, int32_t speaker, float *out,
                                            size_t capacity, size_t *dimension, double *duration_seconds);
} speakersync_instance_t;

/* ------------------------------------------------------------------------------------------------ */
/* Factory                                                                                           */
/* ------------------------------------------------------------------------------------------------ */

/** How soon turns come out relative to the audio pushed. */
typedef enum speakersync_latency_class {
    SPEAKERSYNC_LATENCY_REALTIME = 0,      /**< turns trail the audio by well under a second. */
    SPEAKERSYNC_LATENCY_NEAR_REALTIME = 1, /**< turns trail by a few seconds, revisions are common. */
    SPEAKERSYNC_LATENCY_OFFLINE = 2        /**< turns come only (or mostly) after finalize. */
} speakersync_latency_class_t;

/**
 * What a provider is. Owned by the plugin; the table and all its strings stay valid and unchanged until
 * deinit(). Strings are UTF-8, NUL-terminated, never NULL (use "" for unknown).
 */
typedef struct speakersync_provider_descriptor {
    /** sizeof(speakersync_provider_descriptor_t) as the plugin was compiled. */
    uint32_t struct_size;
    /** Stable id chosen by sessions, [a-z0-9_.-]+, e.g. "energy". Unique among loaded providers. */
    const char *id;
    /** Human-readable name. */
    const char *name;
    /** The provider's own version, e.g. "1.0.0". */
    const char *version;
    /** One honest sentence or two on what it does and how good it is. */
    const char *description;
    /** A speakersync_latency_class_t. */
    uint32_t latency_class;
    /** SPDX licence expression of the provider (code and any model weights), e.g. "MIT". */
    const char *licence;

    /* ---- ABI 1, revision 4: read only if SPEAKERSYNC_HAS_MEMBER(descriptor, ...) ---- */

    /** What the provider needs to run, for an operator choosing providers: models to configure, keys,
     *  network ("a pyannote segmentation ONNX model and an embedding ONNX model: see …"); "" for nothing. */
    const char *requirements;
    /** Its accuracy and speed as measured, with how and when ("synthetic 2 speakers DER 3.3 % …
     *  (speakersync eval, 2026-11-24)"), or "not measurable here: <why>"; "" when unknown. */
    const char *measured;
} speakersync_provider_descriptor_t;

/**
 * A provider factory. Owned by the plugin, valid until deinit().
 */
typedef struct speakersync_factory {
    /** sizeof(speakersync_factory_t) as the plugin was compiled. */
    uint32_t struct_size;
    /** Opaque to the host; the plugin's per-factory data. Owned by the plugin. */
    void *factory_data;

    /**
     * Describe this provider. Thread: loader thread, once after init (hosts may call it again later from
     * any thread: the result must not change). Returns a plugin-owned table valid until deinit; never NULL.
     */
    const speakersync_provider_descriptor_t *(*describe)(const struct speakersync_factory *factory);

    /**
     * Create an instance for one session. Thread: that session's serial queue; creates for different
     * sessions run concurrently. `cfg` and its strings are host-owned and borrowed for the call.
     * On failure return NULL and write a NUL-terminated UTF-8 message into the host-owned `error_buf`
     * (capacity error_buf_size bytes, including the NUL; truncate to fit). On success the returned instance
     * is owned by the plugin and released by the host only through inst->destroy(inst).
     */
    speakersync_instance_t *(*create)(const struct speakersync_factory *factory,
                                      const speakersync_instance_config_t *cfg, char *error_buf,
                                      size_t error_buf_size);

    /* ---- ABI 1, revision 2: NULL or absent (check struct_size) in plugins without speaker embeddings ---- */

    /**
     * The voice embedding of one person from `count` mono float32 samples at 16 kHz (enrolment: a few
     * seconds of that person alone). Writes up to `capacity` floats into host-owned `out`, sets *dimension.
     * Thread: any host thread, concurrently with anything else (instances and other embed_voice calls).
     * On failure writes a NUL-terminated message into error_buf (as create() does) and returns an error:
     * SPEAKERSYNC_ERR_INVALID_ARGUMENT for audio too short or without speech.
     */
    speakersync_status_t (*embed_voice)(const struct speakersync_factory *factory, const float *samples,
                                        size_t count, float *out, size_t capacity, size_t *dimension,
                                        char *error_buf, size_t error_buf_size);

    /* ---- ABI 1, revision 3: NULL or absent (check struct_size) in plugins that check options only in create() ---- */

    /**
     * Whether a session's options are acceptable, without creating anything. `options_json` is what create()
     * would receive in cfg->options_json (canonical JSON text of an object, "{}" for none); host-owned and
     * borrowed for the call. Thread: any host thread, concurrently with anything else.
     * Returns SPEAKERSYNC_OK, or SPEAKERSYNC_ERR_INVALID_ARGUMENT after writing a NUL-terminated message that
     * names the offending option into the host-owned error_buf (as create() does). The host calls it before
     * create(), so that a client's bad option (a typo, a value out of range) is reported to the client as
     * its own mistake rather than as a provider failure. create() must still refuse bad options itself.
     */
    speakersync_status_t (*check_options)(const struct speakersync_factory *factory, const char *options_json,
                                          char *error_buf, size_t error_buf_size);

    /* ---- ABI 1, revision 4: NULL or absent (check struct_size) in providers that are always usable ---- */

    /**
     * Whether the provider can serve sessions now. A plugin loads even when one of its providers lacks
     * what it needs (a model file the operator has not configured, a licence that did not activate), so
     * that the server can say why: it lists the provider as unavailable with this reason and refuses its
     * sessions with `provider_unavailable`. Returns SPEAKERSYNC_OK, or SPEAKERSYNC_ERR_UNAVAILABLE after
     * writing a NUL-terminated message into the host-owned reason_buf that tells the operator what to do
     * ("no segmentation model: set SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL or …"); never a secret.
     * Thread: the loader thread after describe, and any host thread later (the answer may change).
     */
    speakersync_status_t (*availability)(const struct speakersync_factory *factory, char *reason_buf,
                                         size_t reason_buf_size);

    /* ---- ABI 1, revision 6: NULL or absent (check struct_size) in providers that gain nothing from batching ---- */

    /**
     * Push audio into `count` instances of THIS factory at once: the same as calling
     * instances[i]->push_audio(instances[i], samples[i], sample_counts[i]) for each i, in any order, except
     * that the plugin may run the work of all of them together (one batched model call for every
     * instance's windows instead of one call each). Results must be those of the separate pushes.
     * statuses[i] receives instance i's status (after an error, instances[i]->last_error(instances[i])
     * gives its message); one instance's failure does not fail the others.
     * Thread: any host thread; the host calls it only when it is every listed instance's turn on its
     * session queue (no other call on any of them runs meanwhile), and lists each instance at most once.
     * Different calls with disjoint instances may run concurrently.
     * Ownership: all four arrays and every samples[i] are host-owned, borrowed for the call; a
     * sample_counts[i] of 0 is a no-op for that instance (status OK).
     */
    void (*push_audio_many)(const struct speakersync_factory *factory, struct speakersync_instance *const *instances,
                            const float *const *samples, const size_t *sample_counts, size_t count,
                            speakersync_status_t *statuses);
} speakersync_factory_t;

/* ------------------------------------------------------------------------------------------------ */
/* Entry                                                                                             */
/* ------------------------------------------------------------------------------------------------ */

/**
 * The plugin's entry table: a const, statically allocated struct owned by the plugin, valid while the
 * library is loaded.
 */
typedef struct speakersync_plugin_entry {
    /** sizeof(speakersync_plugin_entry_t) as the plugin was compiled. FIRST member, in every version. */
    uint32_t struct_size;
    /** SPEAKERSYNC_PLUGIN_ABI_VERSION the plugin was built against. SECOND member, in every version. */
    uint32_t abi_version;

    /**
     * Called once, on the loader thread, before anything else but speakersync_plugin_entry. `host` is owned
     * by the host and stays valid until deinit() returns. Return SPEAKERSYNC_OK, or an error to refuse to
     * load (log why through host->log first); the host then unloads the library without calling deinit.
     */
    speakersync_status_t (*init)(const speakersync_host_t *host);

    /**
     * Called once, after every instance has been destroyed, just before the host dlclose()s the library.
     * The library is never unmapped (RTLD_NODELETE: runtimes such as Swift's keep pointers into a loaded
     * library's metadata for the life of the process), so its globals survive: if the same file is loaded
     * again, init() is called again on that state and must start afresh.
     * Thread: whichever host thread lets go of the library last (the one releasing the registry, or a
     * session queue destroying the last instance); never concurrently with any other call into the plugin.
     * Free everything init allocated.
     */
    void (*deinit)(void);

    /** How many factories (providers) the plugin offers. Loader thread, after init. */
    uint32_t (*get_factory_count)(void);

    /** Factory `index` (0 <= index < count), plugin-owned, valid until deinit; NULL if out of range.
     *  Loader thread, after init. */
    const speakersync_factory_t *(*get_factory)(uint32_t index);
} speakersync_plugin_entry_t;

/** The type of the exported entry function, for hosts casting the result of dlsym. */
typedef const speakersync_plugin_entry_t *(*speakersync_plugin_entry_fn)(void);

/**
 * The one exported symbol. Thread: the host's loader thread. Must be cheap and side-effect free: no
 * allocation, no threads; real work belongs in init(). Returns a plugin-owned static table.
 */
SPEAKERSYNC_PLUGIN_EXPORT const speakersync_plugin_entry_t *speakersync_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* SPEAKERSYNC_PLUGIN_H */
