-- Free-text parts of answers (docs/study-spec.md, "Free-text answers"): the
-- answer's stored value stays categorical (agreement, distributions); the
-- text a kind's declared field carries lives here, one row per answer,
-- written in the answer's own transaction.
CREATE TABLE answer_texts (
    task_id INTEGER PRIMARY KEY,
    field   TEXT NOT NULL,
    text    TEXT NOT NULL
);

-- The text an adjudicator settled on (the triplet check's final P2).
ALTER TABLE adjudications ADD COLUMN text TEXT;
