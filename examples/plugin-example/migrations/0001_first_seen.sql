-- When the example plugin first saw each caller. IF NOT EXISTS: a plugin's migration should survive being
-- written again by hand, though the gateway applies each file once (recorded as example-header/0001_first_seen).
CREATE TABLE IF NOT EXISTS example_first_seen (
  caller_id text PRIMARY KEY,
  first_seen timestamptz NOT NULL DEFAULT now()
);
