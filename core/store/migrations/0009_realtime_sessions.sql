-- Realtime sessions of POST /v1/realtime/sessions: the gateway id (`rt-<uuid>`), the settings applied upstream when
-- the client connects, who created it (the session is metered in their name when it closes) and its status
-- (connecting -> connected -> closed). The ticket itself lives only in the KV (single use, 60 s); the record keeps
-- its expiry. Closed records carry the session's usage. Read by tenant.
CREATE TABLE realtime_sessions (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  caller_kind text NOT NULL CHECK (caller_kind IN ('api_key', 'jwt')),
  api_key_id text,
  user_id text,
  organization_id text,
  department_id text,
  provider text NOT NULL,
  -- The model the caller named, the configured model it resolved to (its pricing prices the session), and upstream.
  requested_model text NOT NULL,
  model text,
  upstream_model text NOT NULL,
  settings jsonb NOT NULL,
  idle_timeout_seconds integer NOT NULL,
  metadata jsonb,
  status text NOT NULL CHECK (status IN ('connecting', 'connected', 'closed')),
  ticket_expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  connected_at timestamptz,
  closed_at timestamptz,
  close_reason text,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  audio_seconds double precision NOT NULL DEFAULT 0
);
CREATE INDEX realtime_sessions_connecting ON realtime_sessions (ticket_expires_at) WHERE status = 'connecting';
