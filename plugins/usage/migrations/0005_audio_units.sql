-- What transcriptions and translations are billed by: `audio_seconds`, the seconds of audio heard, whatever
-- response_format the caller asked for; 0 for every other modality.
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS audio_seconds double precision NOT NULL DEFAULT 0;
