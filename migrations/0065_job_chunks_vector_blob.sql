-- Staged vectors are f32 little-endian BLOBs (4 bytes per dimension) instead of JSON text: a
-- fraction of the bytes, and no float formatting / parsing between the embed and index stages.
-- SQLite cannot change a column's declared type, so the staging table is rebuilt. Rows staged
-- as JSON text by an earlier version are copied unchanged (a BLOB column keeps TEXT values as
-- text) and the index stage still reads them, so jobs in flight during the upgrade finish.
CREATE TABLE job_chunks_next (
  job_id       TEXT NOT NULL,
  seq          INTEGER NOT NULL,         -- job_files.seq of the file
  chunk_index  INTEGER NOT NULL,
  chunk        TEXT NOT NULL,            -- Chunk JSON (the core's serialization)
  text_hash    TEXT NOT NULL,
  vector       BLOB,                     -- f32 little-endian, set by the embed stage
  PRIMARY KEY (job_id, seq, chunk_index)
);
INSERT INTO job_chunks_next (job_id, seq, chunk_index, chunk, text_hash, vector)
  SELECT job_id, seq, chunk_index, chunk, text_hash, vector FROM job_chunks;
DROP TABLE job_chunks;
ALTER TABLE job_chunks_next RENAME TO job_chunks;
