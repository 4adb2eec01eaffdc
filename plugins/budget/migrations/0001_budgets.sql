-- Spending limits in USD (plugins/budget/). Written IF NOT EXISTS: data folders made before budgets moved into
-- their plugin already hold this table (then core migration 0004). A budget caps what one scope may spend per period:
-- the deployment (the tenant itself: scope_id is null), an organization, a department or one API key.
-- Spend is not stored here: it lives in KV counters (integer micro-dollars per budget and period start),
-- rebuilt from usage_records when a counter is missing.
CREATE TABLE IF NOT EXISTS budgets (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  scope text NOT NULL CHECK (scope IN ('deployment', 'organization', 'department', 'key')),
  scope_id text,
  period text NOT NULL CHECK (period IN ('daily', 'monthly', 'total')),
  -- Whole micro-dollars: the counters are integers.
  limit_usd numeric(18, 6) NOT NULL CHECK (limit_usd >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((scope = 'deployment') = (scope_id IS NULL))
);
-- One budget per scope and period. scope_id is null for the deployment, and nulls are distinct in a plain
-- unique constraint, hence the expression.
CREATE UNIQUE INDEX IF NOT EXISTS budgets_scope_period ON budgets (tenant_id, scope, COALESCE(scope_id, ''), period);
CREATE INDEX IF NOT EXISTS budgets_page ON budgets (created_at, id);
