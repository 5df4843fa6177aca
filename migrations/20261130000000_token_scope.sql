-- What a token may do (issue 62), so that an assistant holds the least it
-- needs: read; book (read, book, extend); full (all its person may do).
-- Every token made before had every right: they stay full.
ALTER TABLE api_token ADD COLUMN scope text NOT NULL DEFAULT 'full'
    CHECK (scope IN ('read', 'book', 'full'));
