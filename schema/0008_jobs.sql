-- Background jobs (re-diarizations and the console's test recordings) live here rather than in a
-- server's memory, so a job answered 202 survives the server stopping: it is run again or marked
-- failed with the reason, never forgotten.
--
-- A queue in the manner of river, Oban and pg-boss: a server claims the oldest queued job of a kind
-- with one UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED LIMIT 1), so two servers never take
-- the same job and neither waits for the other. The claim commits at once (status 'running' and the
-- server's number), so no transaction stays open while the job runs; a job whose server holds no
-- lease lock (0003: advisory lock 1397965635, server_instance) was cut off and is recovered.
CREATE TABLE jobs (
    id              text PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('rediarization', 'test_recording')),
    device_id       text NOT NULL,                  -- who may see it: the conversation's or the request's device
    conversation_id text REFERENCES conversations (id) ON DELETE CASCADE,  -- a re-diarization's; NULL for test recordings
    provider        text NOT NULL,                  -- a re-diarization's provider; a test recording's, comma-separated
    request         text NOT NULL DEFAULT '{}',     -- JSON: a re-diarization's options, a test recording's request
    status          text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    progress        double precision NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
    failure_reason  text,                           -- why it failed (the provider's error, an interrupted run)
    result          text,                           -- JSON: a re-diarization's figures, a test recording's report
    attempts        integer NOT NULL DEFAULT 0,     -- runs started and cut off or finished (an orderly stop gives its run back)
    server_instance integer,                        -- the server running it, or that ran it last (NULL while queued)
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz,
    heartbeat_at    timestamptz                     -- last progress or sign of life written by its server
);

-- The queue: the oldest queued job of a kind.
CREATE INDEX jobs_queue ON jobs (kind, created_at, id) WHERE status = 'queued';
-- Recovery and the server-wide limits look at running jobs only.
CREATE INDEX jobs_running ON jobs (server_instance) WHERE status = 'running';
-- A device's recent jobs, newest first (GET /v1/diarization-jobs, /v1/test-recordings).
CREATE INDEX jobs_by_device ON jobs (kind, device_id, created_at DESC);
CREATE INDEX jobs_by_conversation ON jobs (conversation_id) WHERE conversation_id IS NOT NULL;
