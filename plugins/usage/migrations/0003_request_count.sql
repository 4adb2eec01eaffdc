-- How many requests a record stands for: 1 for a request metered by the pipeline, the number of request lines
-- for work metered as a whole (a batch of 40 lines is one record of 40 requests). GET /v1/usage sums it, so
-- that `requests` counts requests, not records. Rows written before this migration are one request each.
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS requests integer NOT NULL DEFAULT 1;
