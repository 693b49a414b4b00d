-- Per file, a hash of the edge rows cross-file resolution last wrote for it. Resolution still
-- resolves every stored file graph together (a changed file can change where other files' calls
-- go), but rewrites the edges only of the files whose resolved edges differ from what is stored:
-- re-indexing one file of a large repository no longer rewrites every edge of the namespace.
-- NULL (a file the chunk stage just wrote, or rows from before this column) means "rewrite".
ALTER TABLE graph_files ADD COLUMN edges_hash TEXT;
