-- Which server runs each active conversation, so that a server starting up can mark as interrupted
-- the conversations a server that died left 'active', and only those: sessions of servers still
-- running (several may share one database) keep theirs. Every server takes a number from
-- server_instances at start and holds the session-level advisory lock (1397965635, number) on a
-- connection of its own for as long as it runs; a conversation whose server holds no such lock is
-- orphaned. 1397965635 is 'SSYC' in ASCII, the lock class of SpeakerSync.
CREATE SEQUENCE server_instances AS integer;

ALTER TABLE conversations
    ADD COLUMN server_instance integer,          -- the server of the latest session; NULL before 0003
    ADD COLUMN status_reason text;               -- why it is interrupted ("provider speakerkit crashed: signal 11 (SIGSEGV)")

CREATE INDEX conversations_active ON conversations (server_instance) WHERE status = 'active';
