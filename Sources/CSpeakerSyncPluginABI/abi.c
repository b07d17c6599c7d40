/* Header-only target: the ABI lives in include/speakersync_plugin.h. This file exists because SwiftPM
 * needs at least one source in a C target; it defines nothing. */
#include "speakersync_plugin.h"
