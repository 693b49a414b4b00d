-- Files a job indexed with a warning: searchable, but not all of them kept (`GRAPH_TOO_LARGE`:
-- the file's code graph was over the D1 value budget and is not stored). Set per staged file by
-- the chunk stage while the job runs, and frozen on the job with its counters (the first 100, like
-- the skipped files), so the job's status shows them.
ALTER TABLE job_files ADD COLUMN warning TEXT;
ALTER TABLE repo_rag_index_job ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]';
