-- Voices: enrolled people and the voice profiles of a conversation's speakers, so that a person is
-- recognised by name in later sessions and a speaker keeps their label after a reconnect.
-- Embeddings live in a provider's own space: they are only compared within the same provider.

CREATE TABLE people (
    person_id      text PRIMARY KEY,
    device_id      text NOT NULL,                 -- people belong to a device (or account)
    name           text NOT NULL,
    provider       text NOT NULL,                 -- whose embedding space `embedding` is in
    embedding      real[] NOT NULL,
    speech_seconds double precision NOT NULL,     -- speech behind the embedding
    source         text NOT NULL,                 -- 'enrolment' or 'conversation:<id>/<label>'
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX people_by_device ON people (device_id, provider);

CREATE TABLE speaker_profiles (
    conversation_id text NOT NULL,
    label           text NOT NULL,                -- "Speaker N" of the conversation
    provider        text NOT NULL,
    embedding       real[] NOT NULL,
    speech_seconds  double precision NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, label, provider)
);
