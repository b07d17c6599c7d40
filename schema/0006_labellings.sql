-- Every provider's labelling of a conversation's words, so providers can be compared on the same
-- speech: the session's own provider ('live'), each provider run beside it on the same audio
-- ('shadow', start field shadow_providers), each re-diarization of stored audio ('rediarized'), and
-- reference turns someone uploaded to score them against ('reference', name "reference:<name>").
-- The conversation's words and speaker_turns remain the transcript the device was sent; these
-- tables hold each provider's view of those same words. A labelling is written whole when its
-- session or job ends, replacing the earlier one of the same name (a resumed session continues it).
CREATE TABLE labellings (
    conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    name            text NOT NULL,        -- the provider id, "<provider>:rediarized" or "reference:<name>"
    provider        text NOT NULL,
    source          text NOT NULL CHECK (source IN ('live', 'shadow', 'rediarized', 'reference')),
    status          text NOT NULL CHECK (status IN ('complete', 'incomplete')),
    status_reason   text,                 -- why incomplete: interrupted, the provider failed or fell behind
    stats           jsonb NOT NULL DEFAULT '{}'::jsonb,  -- audio, speakers, real-time factor, label latency, chunk time
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, name)
);

-- The labelling's speaker turns on the conversation timeline, with its own speaker labels.
CREATE TABLE labelling_turns (
    conversation_id text NOT NULL,
    name            text NOT NULL,
    speaker         text NOT NULL,
    start_seconds   double precision NOT NULL,
    end_seconds     double precision NOT NULL,
    confidence      double precision,
    FOREIGN KEY (conversation_id, name) REFERENCES labellings (conversation_id, name) ON DELETE CASCADE
);
CREATE INDEX labelling_turns_by_time ON labelling_turns (conversation_id, name, start_seconds);

-- The speaker the labelling gave each word (keyed as in words; NULL: no turn of it covers the word).
CREATE TABLE labelling_words (
    conversation_id    text NOT NULL,
    name               text NOT NULL,
    result_id          text NOT NULL,
    word_index         integer NOT NULL,
    speaker            text,
    speaker_confidence double precision,
    PRIMARY KEY (conversation_id, name, result_id, word_index),
    FOREIGN KEY (conversation_id, name) REFERENCES labellings (conversation_id, name) ON DELETE CASCADE
);
