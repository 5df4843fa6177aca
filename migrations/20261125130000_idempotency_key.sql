-- A repeated submit (a double click, a retried script) returns the first
-- answer instead of acting twice. A key is the client's (an `Idempotency-Key`
-- header, or the hidden field every booking form carries), scoped to the
-- user; `request` is a digest of what was asked, so a key reused for another
-- request is refused. `answer` is NULL while the first request runs.
CREATE TABLE idempotency_key (
    user_id    uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    key        text NOT NULL CONSTRAINT idempotency_key_length CHECK (length(key) BETWEEN 1 AND 255),
    request    text NOT NULL,
    status     smallint,
    answer     jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_key_by_age ON idempotency_key (created_at);
