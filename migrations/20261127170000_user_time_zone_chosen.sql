-- Issue 47: a zone chosen in Settings is every page's zone; one only learnt
-- from a browser is not (pages then follow the browser the person uses).
ALTER TABLE app_user ADD COLUMN time_zone_chosen boolean NOT NULL DEFAULT false;
