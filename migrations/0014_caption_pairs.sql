-- HNC caption-pair writing (docs/study-spec.md, "caption_writing"): an
-- answer may carry several named texts (the positive and the negative
-- caption), one row per field; a writing item's caption type is data from
-- its import, not one of SugarCrepe's categories.
CREATE TABLE answer_texts_new (
    task_id INTEGER NOT NULL,
    field   TEXT NOT NULL,
    text    TEXT NOT NULL,
    PRIMARY KEY (task_id, field)
) WITHOUT ROWID;
INSERT INTO answer_texts_new (task_id, field, text) SELECT task_id, field, text FROM answer_texts;
DROP TABLE answer_texts;
ALTER TABLE answer_texts_new RENAME TO answer_texts;

ALTER TABLE instances ADD COLUMN caption_type TEXT;

-- The words a study's texts are checked against (`vocabulary` in its spec),
-- fixed at creation: one word a line.
CREATE TABLE study_vocabularies (
    study_id INTEGER PRIMARY KEY REFERENCES studies(id),
    strict   INTEGER NOT NULL,
    words    TEXT NOT NULL
);
