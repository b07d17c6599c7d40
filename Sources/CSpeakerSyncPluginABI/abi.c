/* Header-only target: see include/speakersync_plugin.h */
