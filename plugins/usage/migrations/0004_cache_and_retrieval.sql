-- A request answered from a cache (the semantic-cache plugin: gw.servedFromCache) says so: `cache_status` is 'hit'
-- (an exact hit) or 'semantic-hit', and null for every request a provider answered; such a request costs 0.
-- `retrieval` holds the vector-store chunks put into the request as context (gw.retrieval), as
-- [{storeId, fileId, chunkIndex, score}], and is null for requests without any. No CHECK constraint on
-- cache_status, as 0001 explains: a refused row would fail its whole batch.
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS cache_status text;
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS retrieval jsonb;
