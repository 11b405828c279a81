-- The blind text-only audit (docs/audit.md): the latest result of each
-- scorer on each stage of a dataset, for the dataset page and the export card.
CREATE TABLE audits (
    dataset_id  INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    stage       TEXT NOT NULL,
    scorer      TEXT NOT NULL,
    -- What ran: the baseline's description or the external command and model.
    source      TEXT NOT NULL,
    -- JSON array of the domain's AuditRow: overall, per type, per type/subtype.
    rows        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, stage, scorer)
);

-- Ranking generated images: each model's score per image of a prompt (the
-- prompt's images are its candidates, slot = position in the import row),
-- imported with the prompts, for its correlation with the people's order.
CREATE TABLE image_scores (
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    slot        INTEGER NOT NULL,
    model       TEXT NOT NULL,
    score       REAL NOT NULL,
    PRIMARY KEY (instance_id, model, slot)
) WITHOUT ROWID;
