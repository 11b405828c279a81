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
