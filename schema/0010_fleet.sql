-- Many servers on one database (docs/deployment.md, "A fleet"): leases with fencing epochs, the
-- fleet's live sessions, and an audit a checker can hold the fencing to.

-- Every running server, with a lease it renews every couple of seconds. A server is live while
-- its lease has not expired (judged by PostgreSQL's clock, the one clock every server shares) and
-- its advisory lock (0003) is held: a SIGKILLed server loses the lock at once, a paused or
-- partitioned one keeps its connection but not its lease.
CREATE TABLE fleet_servers (
    server_instance  integer PRIMARY KEY,
    address          text NOT NULL DEFAULT '',      -- host:port as the server sees itself (for operators)
    version          text NOT NULL DEFAULT '',
    started_at       timestamptz NOT NULL DEFAULT now(),
    heartbeat_at     timestamptz NOT NULL DEFAULT now(),
    lease_expires_at timestamptz NOT NULL,
    stopping         boolean NOT NULL DEFAULT false  -- draining: it takes no new sessions
);

-- Who runs each conversation now. `epoch` increases on every claim, by any server; a session's
-- writes carry the epoch of its claim and the store writer commits them only while the row still
-- has that epoch (read FOR SHARE in the same transaction, so a takeover waits for a write in
-- flight and every later write of the old owner is refused). server_instance NULL: released.
-- While held, the row is also the fleet's registry of live sessions: `snapshot` is what the owner
-- last published of the session (the console's figures, no transcript).
CREATE TABLE conversation_leases (
    conversation_id text PRIMARY KEY,
    epoch           bigint NOT NULL,
    server_instance integer,
    device_id       text NOT NULL,
    acquired_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    snapshot        jsonb,
    published_at    timestamptz
);
CREATE INDEX conversation_leases_held ON conversation_leases (server_instance) WHERE server_instance IS NOT NULL;

-- Every claim ever made, for audits: one server per (conversation, epoch) by construction.
CREATE TABLE lease_history (
    conversation_id text NOT NULL,
    epoch           bigint NOT NULL,
    server_instance integer NOT NULL,
    acquired_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (conversation_id, epoch)
);

-- Every committed write of a session, by epoch and server: the fault harness's checker asserts that
-- no (conversation, epoch) was written by two servers, and that nothing was committed under an
-- epoch after a later epoch had been claimed (a stale write).
CREATE TABLE conversation_writes (
    conversation_id text NOT NULL,
    epoch           bigint NOT NULL,
    server_instance integer NOT NULL,
    steps           bigint NOT NULL DEFAULT 0,
    first_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (conversation_id, epoch, server_instance)
);

-- A rename or merge sent to one server for a session another server runs: the receiving server
-- inserts the command and notifies `speakersync_fleet`; the owner applies it through its session
-- and writes the answer; the receiver waits for it.
CREATE TABLE session_commands (
    id              bigserial PRIMARY KEY,
    conversation_id text NOT NULL,
    server_instance integer NOT NULL,               -- the owner it is addressed to
    command         jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    answer          jsonb,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_commands_pending ON session_commands (server_instance) WHERE status = 'pending';
