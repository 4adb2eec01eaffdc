-- What guard plugins found in the request and its answer (gw.guardVerdicts), as
-- [{guard, type, action, direction, count, score?}] (never the matched text); null for requests without any.
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS guard_verdicts jsonb;
