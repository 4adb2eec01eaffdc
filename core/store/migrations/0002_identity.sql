-- Tenancy below the deployment: organizations, and departments inside them. Each carries a policy that narrows
-- deployment settings (model allow-list, model overrides, rate limits); see core/identity/policy.ts.
CREATE TABLE organizations (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  policy jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX organizations_page ON organizations (tenant_id, created_at, id);

CREATE TABLE departments (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  policy jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX departments_page ON departments (organization_id, created_at, id);

ALTER TABLE api_keys
  ADD COLUMN organization_id text REFERENCES organizations (id),
  ADD COLUMN department_id text REFERENCES departments (id);
CREATE INDEX api_keys_page ON api_keys (created_at, id);

-- Revoked JWT ids. The KV holds the live blocklist that every request checks; this table is its durable copy,
-- loaded into the KV at start so that a restart of an in-memory KV forgets nothing.
CREATE TABLE jwt_revocations (
  jti text PRIMARY KEY,
  tenant_id text REFERENCES tenants (id),
  expires_at timestamptz,
  revoked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jwt_revocations_expiry ON jwt_revocations (expires_at);

CREATE INDEX admin_audit_target ON admin_audit (target_type, target_id);
