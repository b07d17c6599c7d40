int speakersync_energy_placeholder(void) { return 0; }
