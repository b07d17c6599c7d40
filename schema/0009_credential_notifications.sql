-- Every change to a credential is announced on the channel `speakersync_credentials`, so every server
-- sharing this database reloads its credentials at once (docs/security.md): a token revoked on one
-- server stops working on the others within a second, not at their next periodic read. A trigger
-- rather than a NOTIFY in the server's code, so that changes made by any writer (another server,
-- an operator's SQL) are announced, and only once they commit (NOTIFY is transactional).
CREATE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('speakersync_credentials', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER device_tokens_changed AFTER INSERT OR UPDATE OR DELETE ON device_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER admin_keys_changed AFTER INSERT OR UPDATE OR DELETE ON admin_keys
    FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
