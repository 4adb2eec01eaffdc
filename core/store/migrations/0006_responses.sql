-- Stored responses of /v1/responses: the gateway id (`resp-<uuid>`), the provider's id, the turn's input items and
-- its full output items, so that a continuation rebuilds the conversation from the chain of previous_response_id
-- links after the provider's own retention has ended. Read by tenant; a deleted response is gone for reads and
-- continuations, while the chain links of its successors stay (they store their own input and output).
CREATE TABLE responses (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  provider text NOT NULL,
  provider_response_id text,
  -- The model the caller named, and the one the provider answered with.
  requested_model text NOT NULL,
  model text,
  previous_response_id text,
  status text NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed', 'cancelled', 'incomplete')),
  -- This turn's instructions and input items (normalized to the array form), and its output items.
  instructions text,
  input jsonb NOT NULL,
  output jsonb NOT NULL DEFAULT '[]'::jsonb,
  usage jsonb,
  error jsonb,
  metadata jsonb,
  caller_kind text NOT NULL CHECK (caller_kind IN ('api_key', 'jwt')),
  api_key_id text,
  user_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
-- The cursor list (core/store/pagination.ts orders by created_at, id).
CREATE INDEX responses_page ON responses (tenant_id, created_at, id);
