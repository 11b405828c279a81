-- Candidate files imported into a dataset. content_sha256 digests the file,
-- the normalisation mode and every referenced image's content, so importing
-- the same file with the same images again is recognised as a no-op.
CREATE TABLE imports (
    id             INTEGER PRIMARY KEY,
    dataset_id     INTEGER NOT NULL REFERENCES datasets(id),
    file_name      TEXT NOT NULL,
    file_sha256    TEXT NOT NULL CHECK (length(file_sha256) = 64),
    content_sha256 TEXT NOT NULL CHECK (length(content_sha256) = 64),
    rows           INTEGER NOT NULL,
    images         INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    UNIQUE (dataset_id, content_sha256)
);
