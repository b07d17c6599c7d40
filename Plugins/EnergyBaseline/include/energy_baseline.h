/*
 * The "energy" provider plugin (libspeakersync-energy.so). Its only exported symbol is
 * speakersync_plugin_entry(), declared in speakersync_plugin.h; this header only names the provider id so
 * C callers need not spell it.
 */
#ifndef SPEAKERSYNC_ENERGY_BASELINE_H
#define SPEAKERSYNC_ENERGY_BASELINE_H

#include "speakersync_plugin.h"

/** The provider id sessions choose. */
#define SPEAKERSYNC_ENERGY_PROVIDER_ID "energy"

#endif
