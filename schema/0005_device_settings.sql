-- Per-device settings the developer console changes (PUT /v1/devices/{id}/settings): the provider a
-- `start` that names none gets, before the server's default. NULL provider: no choice (server default).
CREATE TABLE device_settings (
    device_id  text PRIMARY KEY,
    provider   text,
    updated_at timestamptz NOT NULL DEFAULT now()
);
