/* Options of the energy provider, parsed from the session's options JSON. */
#ifndef ENERGY_OPTIONS_H
#define ENERGY_OPTIONS_H

#include <stddef.h>

/* Internal to the plugin: only speakersync_plugin_entry is exported from the library. */
#if defined(__GNUC__) || defined(__clang__)
#define ENERGY_INTERNAL __attribute__((visibility("hidden")))
#else
#define ENERGY_INTERNAL
#endif

#define ENERGY_MAX_SPEAKERS_LIMIT 32

typedef struct energy_options {
    /** Distance (in normalised feature units) under which a window joins an existing speaker. */
    double threshold;
    /** Never more than this many speakers; further windows join the nearest one. */
    int max_speakers;
} energy_options_t;

/** The defaults used for absent keys and NULL / empty JSON. */
ENERGY_INTERNAL energy_options_t energy_options_default(void);

/**
 * Parse a JSON object with optional keys "threshold" (number in (0, 100]) and "max_speakers" (integer in
 * [1, 32]). Any other key, value type or trailing text is an error. Returns 0 on success; otherwise -1
 * with a NUL-terminated message in `error` (truncated to error_size). Reads `json` only up to its NUL.
 */
ENERGY_INTERNAL int energy_options_parse(const char *json, energy_options_t *out, char *error, size_t error_size);

#endif
