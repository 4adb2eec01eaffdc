-- Tenants are deployments; every key and user belongs to one. `default` always exists.
CREATE TABLE tenants (
  id text PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO tenants (id, name) VALUES ('default', 'Default deployment');

-- API keys are stored as a SHA-256 of the key: the key carries 256 random bits, so a fast hash is safe.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  key_hash text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  capabilities text[] NOT NULL,
  provider_ids text[] NOT NULL DEFAULT '{}',
  model_ids text[] NOT NULL DEFAULT '{}',
  rate_limits jsonb,
  expires_at timestamptz,
  allowed_ips text[] NOT NULL DEFAULT '{}',
  metadata jsonb,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'expired', 'revoked')),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);

-- Every admin write: who did what to which record, and when.
CREATE TABLE admin_audit (
  id bigserial PRIMARY KEY,
  actor text NOT NULL,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text NOT NULL,
  details jsonb,
  at timestamptz NOT NULL DEFAULT now()
);
