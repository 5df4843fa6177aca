-- The zone a person reads times in: mails, their calendar feed and the CLI
-- write times in it, named. NULL until they choose one in Settings or a
-- browser of theirs reports its zone (then that one is kept).
ALTER TABLE app_user ADD COLUMN time_zone text;
