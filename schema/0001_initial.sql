-- SpeakerSync schema, version 1: conversations, their speakers, the device's words with the speaker
-- each was labelled with, and the speaker turns of every provider. Applied once, in a transaction,
-- and recorded in schema_migrations by the server at start.

CREATE TABLE conversations (
    id            text PRIMARY KEY,
    device_id     text NOT NULL,
    provider      text NOT NULL,                 -- the provider of the latest session
    sample_rate   integer NOT NULL,              -- as the device sends it (Hz)
    encoding      text NOT NULL,                 -- pcm_s16le | pcm_f32le
    language      text,
    options       jsonb NOT NULL DEFAULT '{}'::jsonb,
    status        text NOT NULL CHECK (status IN ('active', 'finalized', 'interrupted')),
    audio_seconds double precision NOT NULL DEFAULT 0,   -- audio received, on the conversation timeline
    started_at    timestamptz NOT NULL DEFAULT now(),
    ended_at      timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_by_device ON conversations (device_id, started_at DESC, id DESC);
CREATE INDEX conversations_by_start ON conversations (started_at DESC, id DESC);

-- "Speaker 1", "Speaker 2", … per conversation; display_name when someone named them,
-- merged_into when a correction merged them into another speaker.
CREATE TABLE speakers (
    conversation_id    text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    label              text NOT NULL,
    display_name       text,
    merged_into        text,
    first_seen_seconds double precision,
    PRIMARY KEY (conversation_id, label)
);

-- Which label a provider's own speaker key maps to ("device/speaker90" → "Speaker 1"), so a
-- resumed session keeps the same labels.
CREATE TABLE speaker_keys (
    conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    provider_key    text NOT NULL,
    label           text NOT NULL,
    PRIMARY KEY (conversation_id, provider_key)
);

-- Every word the device's ASR sent, keyed by its result and position in that result (a result
-- re-sent replaces its words), with the speaker the merge gave it and the utterance it belongs to.
-- No foreign key to conversations: its per-row check costs about 40 % of insert throughput on this
-- hot table (measured with speakersync-bench persist). The writer writes a conversation's row
-- before its words in the same transaction, and deleting a conversation deletes its words through
-- the trigger below.
CREATE TABLE words (
    conversation_id    text NOT NULL,
    result_id          text NOT NULL,
    word_index         integer NOT NULL,
    text               text NOT NULL,
    start_seconds      double precision NOT NULL,
    end_seconds        double precision NOT NULL,
    confidence         double precision,
    is_final           boolean NOT NULL,
    speaker            text,                      -- NULL: no provider turn covers it (yet)
    speaker_confidence double precision,
    utterance_id       bigint NOT NULL,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, result_id, word_index)
);
CREATE INDEX words_by_time ON words (conversation_id, start_seconds);

CREATE FUNCTION delete_conversation_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM words WHERE conversation_id = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER conversations_delete_words AFTER DELETE ON conversations
    FOR EACH ROW EXECUTE FUNCTION delete_conversation_words();

-- Speaker turns as each provider reported them (labels already mapped to the conversation's).
CREATE TABLE speaker_turns (
    conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    turn_id         text NOT NULL,               -- "<provider>:<session>:<id>" or "device:<ms>:<key>"
    provider        text NOT NULL,
    speaker         text NOT NULL,
    start_seconds   double precision NOT NULL,
    end_seconds     double precision NOT NULL,
    confidence      double precision,
    PRIMARY KEY (conversation_id, turn_id)
);
CREATE INDEX speaker_turns_by_time ON speaker_turns (conversation_id, provider, start_seconds);

-- The labelled transcript as utterances: consecutive words of one speaker, as the server grouped
-- them (the same ids the device received).
CREATE VIEW utterances AS
SELECT w.conversation_id,
       w.utterance_id,
       w.speaker,
       coalesce(s.display_name, w.speaker, 'Unknown') AS display_name,
       min(w.start_seconds) AS start_seconds,
       max(w.end_seconds) AS end_seconds,
       string_agg(w.text, ' ' ORDER BY w.start_seconds, w.end_seconds, w.result_id COLLATE "C", w.word_index) AS text,
       count(*) AS word_count
FROM words w
LEFT JOIN speakers s ON s.conversation_id = w.conversation_id AND s.label = w.speaker
GROUP BY w.conversation_id, w.utterance_id, w.speaker, s.display_name;

-- "Speaker 1: Hello there" lines; ORDER BY start_seconds.
CREATE VIEW transcript_lines AS
SELECT conversation_id, utterance_id, start_seconds, end_seconds, display_name || ': ' || text AS line
FROM utterances;
