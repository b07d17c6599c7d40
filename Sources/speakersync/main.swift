print("speakersync")
