-- A conversation's audio, kept when its session asks (start field store_audio): for playback,
-- re-diarization with another provider, and re-examination later. Lossless and compact: each chunk
-- is a complete FLAC stream of 16-bit mono samples at the device's sample rate, about 10 s long,
-- placed on the conversation timeline. Deleted with the conversation, and after the server's
-- retention period (serve --audio-retention-days).
CREATE TABLE audio_chunks (
    conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    start_sample    bigint NOT NULL,      -- on the conversation timeline, in samples at sample_rate
    sample_rate     integer NOT NULL,
    sample_count    integer NOT NULL,
    flac            bytea NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, start_sample)
);
CREATE INDEX audio_chunks_by_age ON audio_chunks (created_at);
