print("speakersync-bench")
