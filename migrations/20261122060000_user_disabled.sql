-- An admin disables a user who must lose access at once (left the team, a
-- compromised account): logins, browser sessions and API tokens stop working
-- while the row and its bookings' history stay. NULL means enabled.
ALTER TABLE app_user
    ADD COLUMN disabled_at     timestamptz,
    ADD COLUMN disabled_reason text NOT NULL DEFAULT '';
