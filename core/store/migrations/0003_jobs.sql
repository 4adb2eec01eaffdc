-- Background jobs (core/jobs/): each row is claimed under a lease by one instance at a time. A running job whose
-- lease_until has passed belongs to an instance that died, and is claimed again.
CREATE TABLE jobs (
  id uuid PRIMARY KEY,
  kind text NOT NULL CHECK (char_length(kind) BETWEEN 1 AND 200),
  key text CHECK (char_length(key) BETWEEN 1 AND 500),
  payload jsonb NOT NULL DEFAULT 'null',
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
  run_at timestamptz NOT NULL DEFAULT now(),
  -- Counted when a run is claimed, before its handler starts: a run that crashed the instance still counts.
  attempts integer NOT NULL DEFAULT 0,
  lease_owner text,
  lease_until timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- A key names at most one live job; finished ones keep it for inspection without blocking a new one.
CREATE UNIQUE INDEX jobs_live_key ON jobs (key) WHERE status IN ('pending', 'running');
-- What claiming scans: due pending jobs, and running jobs by lease expiry.
CREATE INDEX jobs_due ON jobs (run_at) WHERE status = 'pending';
CREATE INDEX jobs_leases ON jobs (lease_until) WHERE status = 'running';
