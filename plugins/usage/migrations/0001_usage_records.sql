-- One row per request that reached the usage plugin (plugins/usage). Written IF NOT EXISTS: data folders made
-- before usage moved into its plugin already hold this table (then core migration 0003). Rows are written in batches,
-- and a batch that failed is written again: `id` is made by the gateway when the record is made, so a retried
-- batch inserts nothing twice (ON CONFLICT (id) DO NOTHING). `request_id` is not unique: callers may choose it
-- (X-Request-ID) and reuse it, and every request still gets its own row.
-- No foreign keys and no CHECK constraints: a row the database refuses would fail its whole batch at every retry.
CREATE TABLE IF NOT EXISTS usage_records (
  id uuid PRIMARY KEY,
  request_id text NOT NULL,
  -- When the request arrived (wall time); the /v1/usage window and `day` use it.
  created_at timestamptz NOT NULL,
  tenant_id text NOT NULL,
  organization_id text,
  department_id text,
  caller_kind text,                  -- api_key | jwt
  api_key_id text,                   -- the key, for API-key callers
  user_id text,                      -- the JWT subject, for JWT callers
  endpoint text NOT NULL,
  stream boolean NOT NULL,
  provider text,                     -- the provider that answered (or failed), when one was called
  requested_model text,              -- the model id the caller sent
  model text,                        -- the configured model it resolved to (after policy overrides)
  upstream_model text,               -- the name sent upstream
  prompt_tokens bigint NOT NULL DEFAULT 0,
  completion_tokens bigint NOT NULL DEFAULT 0,
  cached_tokens bigint NOT NULL DEFAULT 0,
  reasoning_tokens bigint NOT NULL DEFAULT 0,
  total_tokens bigint NOT NULL DEFAULT 0,
  estimated boolean NOT NULL DEFAULT false,
  cost_usd numeric,                  -- null when the model has no pricing
  latency_ms double precision NOT NULL,
  ttfb_ms double precision,          -- first chunk of a stream; the answer of a non-streaming request
  status text NOT NULL,              -- completed | aborted | failed
  error_code text
);
CREATE INDEX IF NOT EXISTS usage_records_tenant_time ON usage_records (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS usage_records_key_time ON usage_records (api_key_id, created_at) WHERE api_key_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS usage_records_user_time ON usage_records (tenant_id, user_id, created_at) WHERE user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS usage_records_request ON usage_records (request_id);
