-- The other benchmarks' protocols. SugarCrepe++'s triplets: a second positive
-- caption (P2) that means the same as the first in other words. SugarCrepe's
-- A/B/Tie: a second hard negative, and the source each negative came from
-- (negative_caption is negative A). NULL for instances without them (BiVLC).
ALTER TABLE instances ADD COLUMN paraphrase TEXT;
ALTER TABLE instances ADD COLUMN negative_b TEXT;
ALTER TABLE instances ADD COLUMN source_a TEXT;
ALTER TABLE instances ADD COLUMN source_b TEXT;
