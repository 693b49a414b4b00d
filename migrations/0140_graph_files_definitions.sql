-- Per file, beside its unresolved graph: its definitions (`edgerag_core::graph::Definitions`: what
-- the resolution's symbol table reads of the graph, JSON, 4–7 % of the graph's bytes on real
-- code), written with the graph by the chunk stage. Every message of a job's end builds the
-- namespace's symbol table again; reading it from the definitions takes that part of the
-- statements reading it from the graphs took. NULL for rows from before this migration, or of a format the build does
-- not read (its JSON does not start with its `{"v":N,`): the graph is read instead.
ALTER TABLE graph_files ADD COLUMN definitions TEXT;
