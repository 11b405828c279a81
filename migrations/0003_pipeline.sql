-- The curation pipeline: Step 4 studies take their items from a Step 3
-- study's survivors; each study says how agreement is mapped and how a
-- disagreement is settled.
ALTER TABLE studies ADD COLUMN source_study_id INTEGER REFERENCES studies(id);
ALTER TABLE studies ADD COLUMN mapping TEXT NOT NULL DEFAULT 'full';
ALTER TABLE studies ADD COLUMN resolve TEXT NOT NULL DEFAULT 'adjudication';
ALTER TABLE studies ADD COLUMN primary_user TEXT;

-- Step 4's second image: the generated image Step 3 chose for the instance.
ALTER TABLE study_items ADD COLUMN chosen_image TEXT REFERENCES images(hash);

-- A researcher's decision on a disputed item; overrides the answers.
CREATE TABLE adjudications (
    study_id    INTEGER NOT NULL REFERENCES studies(id),
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    value       TEXT NOT NULL,
    user_id     INTEGER NOT NULL REFERENCES users(id),
    decided_at  INTEGER NOT NULL,
    PRIMARY KEY (study_id, instance_id)
) WITHOUT ROWID;
