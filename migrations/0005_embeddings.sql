-- Embedding cache for model scoring: one vector per (run name, weights,
-- preprocessing, content). content_hash is the image's sha256 (its id in
-- `images`) or the sha256 of the caption's UTF-8 text. vector holds `dim`
-- f32 values, little-endian. Rows are written batch by batch, so a cancelled
-- run keeps what it computed.
CREATE TABLE embeddings (
    model        TEXT NOT NULL,
    weights      TEXT NOT NULL, -- sha256 of model.safetensors, or a scorer's fingerprint
    preprocess   TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('image', 'text')),
    content_hash TEXT NOT NULL,
    dim          INTEGER NOT NULL,
    vector       BLOB NOT NULL CHECK (length(vector) = 4 * dim),
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (model, weights, preprocess, kind, content_hash)
) WITHOUT ROWID;
