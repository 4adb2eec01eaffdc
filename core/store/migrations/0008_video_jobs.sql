-- Video generation jobs of POST /v1/video/generations: the gateway id (`video-<uuid>`), the provider task it names,
-- its status as the `video.poll` sweep last saw it, and who started it (the job is metered in their name once it
-- ends). Read by tenant; the sweep reads the due ones across tenants.
CREATE TABLE video_jobs (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  caller_kind text NOT NULL CHECK (caller_kind IN ('api_key', 'jwt')),
  api_key_id text,
  user_id text,
  organization_id text,
  department_id text,
  -- The model the caller named, the configured model it resolved to (its pricing prices the job), and where it ran.
  requested_model text NOT NULL,
  model text NOT NULL,
  provider text NOT NULL,
  upstream_model text NOT NULL,
  provider_task_id text NOT NULL,
  prompt text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'in_progress', 'completed', 'failed')),
  progress real NOT NULL DEFAULT 0,
  -- Completed: where the video is, and whether fetching it needs the provider's credential (then the gateway's
  -- content route serves it).
  result_url text,
  result_content_type text,
  needs_credential boolean NOT NULL DEFAULT false,
  seconds_requested integer,
  seconds_made real,
  error_code text,
  error_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  -- The sweep's schedule: the next status request, and the failed ones in a row (for the backoff).
  next_poll_at timestamptz NOT NULL,
  poll_attempts integer NOT NULL DEFAULT 0,
  -- Set once the ended job was reported as metered work; the sweep reports the ended ones not yet marked.
  metered boolean NOT NULL DEFAULT false
);
CREATE INDEX video_jobs_due ON video_jobs (next_poll_at) WHERE status IN ('queued', 'in_progress');
CREATE INDEX video_jobs_unmetered ON video_jobs (completed_at) WHERE status IN ('completed', 'failed') AND NOT metered;
