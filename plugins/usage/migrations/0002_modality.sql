-- Every modality is metered (plugins/usage, core/canonical/units.ts): a usage record names the modality it served
-- (chat, completion, embeddings, rerank, ...) and carries the units it is billed in beside its tokens: search
-- units for rerank. Rows written before this migration are chat, which the default says, except those of the
-- legacy completions endpoint, recorded as `completion` from now on and set so below. No CHECK constraint on
-- modality, as 0001 explains: a refused row would fail its whole batch.
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS modality text NOT NULL DEFAULT 'chat';
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS search_units bigint NOT NULL DEFAULT 0;
UPDATE usage_records SET modality = 'completion' WHERE endpoint = '/v1/completions' AND modality = 'chat';
