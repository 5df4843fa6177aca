-- Which API token and which client (an assistant's MCP clientInfo) made a
-- change (issue 62), beside who made it. The token's id is kept without a
-- reference: tokens are purged some days after they end, and the log must
-- still say that a token acted. Empty client: the portal or a plain API
-- client that did not name itself.
ALTER TABLE booking_event
    ADD COLUMN token_id uuid,
    ADD COLUMN client text NOT NULL DEFAULT '';
ALTER TABLE audit_event
    ADD COLUMN token_id uuid,
    ADD COLUMN client text NOT NULL DEFAULT '';
