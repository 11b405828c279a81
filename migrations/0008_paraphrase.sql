-- SugarCrepe++'s triplets: a second positive caption (P2) that means the same
-- as the first in other words. NULL for instances without one (BiVLC).
ALTER TABLE instances ADD COLUMN paraphrase TEXT;
