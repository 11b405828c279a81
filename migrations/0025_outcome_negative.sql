-- The negative image each model outcome was computed on (`hardneg score`,
-- the demo models), so that an outcome whose negative curation has since
-- replaced is left out of the comparison, not shown as the model's
-- figure on images it never saw. NULL where no image was scored (results
-- imported from a file).
ALTER TABLE model_outcomes ADD COLUMN negative_image TEXT;
