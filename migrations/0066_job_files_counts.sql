-- A job's counters (refreshed by every index message and read live by job status requests)
-- aggregate status / change / reason / chunk_count over its staging rows. Without this covering
-- index each row is read from the table, and `chunk_count` sits after the `content` column, so
-- reading it walks the overflow pages of every file body not chunked yet.
CREATE INDEX IF NOT EXISTS job_files_counts ON job_files (job_id, status, change, reason, chunk_count);
