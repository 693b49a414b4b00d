-- Tags: labels set per upload and per file. Stored as `,a,b,` (empty for none) so that
-- `instr(tags, ',a,') > 0` matches whole tags; the file's set is copied to each of its chunks
-- (keyword search filters on it without a join) and to its vectors' metadata.
ALTER TABLE job_files ADD COLUMN tags TEXT NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN tags TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN tags TEXT NOT NULL DEFAULT '';
