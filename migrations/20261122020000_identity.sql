-- Identity: browser sessions (tower-sessions' PostgreSQL store reads and
-- writes this table; its shape is the store's), and where a membership came
-- from, so a login can replace the tenants its groups grant without touching
-- the ones an admin assigned by hand.

CREATE TABLE web_session (
    id          text PRIMARY KEY NOT NULL,
    data        bytea NOT NULL,
    expiry_date timestamptz NOT NULL
);
CREATE INDEX web_session_by_expiry ON web_session (expiry_date);

ALTER TABLE membership
    ADD COLUMN source text NOT NULL DEFAULT 'manual'
        CONSTRAINT membership_source_known CHECK (source IN ('manual', 'oidc'));

CREATE INDEX api_token_by_user ON api_token (user_id, created_at);
