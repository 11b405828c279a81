-- Why a place ended before its bundle was done: 'uninformative' when
-- adaptive overlap recognised the participant's answers as carrying no
-- information (docs/study-spec.md). NULL for every other lease. The
-- approve list and the dashboard mark such completions.
ALTER TABLE leases ADD COLUMN ended_why TEXT;
