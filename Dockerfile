# SpeakerSync server image: release build on Swift 6.3 (Debian bookworm), plugins beside the binary.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends pkg-config libwebsockets-dev libpq-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Plugins ./Plugins
COPY Tests ./Tests
RUN swift build -c release --product speakersync && swift build -c release --product speakersync-energy \
    && mkdir -p /out && cp .build/release/speakersync .build/release/libspeakersync-*.so /out/

FROM swift:6.3-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libwebsockets17 libpq5 espeak-ng sox \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ /app/
COPY schema /app/schema
ENV SPEAKERSYNC_SCHEMA_DIR=/app/schema SPEAKERSYNC_PLUGINS=/app
EXPOSE 8080
ENTRYPOINT ["/app/speakersync"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
