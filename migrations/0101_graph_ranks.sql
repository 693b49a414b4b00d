-- `repo.map`'s ranks: PageRank of every symbol over the resolved code graph (CALLS, REFERENCES,
-- IMPORTS, EXTENDS, IMPLEMENTS votes) and of every file (the sum of its symbols'), computed when
-- a job that changed files finishes, with the cross-file resolution (`store/graph.rs`), and
-- written only where they changed. A symbol written since (a job still running) ranks 0 until
-- its job finishes.
ALTER TABLE graph_nodes ADD COLUMN rank REAL NOT NULL DEFAULT 0;
ALTER TABLE graph_files ADD COLUMN rank REAL NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS graph_files_by_rank ON graph_files (namespace, rank DESC, path);
