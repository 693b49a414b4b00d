-- Cross-file resolution owns only the edges their own file could not resolve (`cross_file` = 1);
-- the chunk stage writes the rest with the file. When a job ends, resolution still resolves every
-- stored file graph together (a changed file can change where other files' calls and type names
-- go), but rewrites only the cross-file edges of the files whose resolved edges differ from what
-- is stored: re-indexing one file of a large repository no longer rewrites every edge.
ALTER TABLE graph_edges ADD COLUMN cross_file INTEGER NOT NULL DEFAULT 0;
-- Per file, the hash of the cross-file edge rows resolution last wrote for it: '' when the chunk
-- stage has just written the file (its cross-file edges are not written yet), NULL for rows from
-- before this migration (whose edges were all written by resolution: all of them are rewritten).
ALTER TABLE graph_files ADD COLUMN edges_hash TEXT;
