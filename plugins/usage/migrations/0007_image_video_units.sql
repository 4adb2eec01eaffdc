-- Image generation is billed by `images` (the count, priced by the size and quality asked, which the cost
-- already reflects) and video generation by `video_seconds` (recorded on the job's own record when it
-- completes); 0 for every other modality.
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS images bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS video_seconds float8 NOT NULL DEFAULT 0;
