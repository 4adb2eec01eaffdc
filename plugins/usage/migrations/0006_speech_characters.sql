-- What text to speech is billed by: `characters`, the code points of the input spoken (billed in full once the
-- provider answers, whatever response_format); 0 for every other modality.
ALTER TABLE usage_records ADD COLUMN IF NOT EXISTS characters bigint NOT NULL DEFAULT 0;
