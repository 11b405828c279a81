-- The funnel counts a dataset's instances by category: from this narrow
-- index rather than every (wide) instance row.
CREATE INDEX instances_by_category ON instances (dataset_id, neg_type, subtype);

-- Answers are read a page of instances per query (resolution, the export):
-- counted_answers builds its list of excluded leases once per query, from
-- these few rows rather than every lease of a big crowd study.
CREATE INDEX leases_excluded ON leases (user_id) WHERE state NOT IN ('active', 'completed');
