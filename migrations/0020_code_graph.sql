-- The code graph of a namespace: symbols (nodes) and the relations between them (edges).
-- The chunk stage replaces a file's nodes, its file-local edges and its unresolved graph; when a
-- job completes, the namespace's edges are rewritten from every file's stored graph (cross-file
-- resolution), so edges into changed or deleted files are re-resolved and none goes stale.

CREATE TABLE graph_nodes (
  namespace   TEXT NOT NULL,
  id          TEXT NOT NULL,            -- BLAKE3 of path + kind + fqn + ordinal
  path        TEXT NOT NULL,
  kind        TEXT NOT NULL,            -- FUNCTION, METHOD, CLASS, …
  name        TEXT NOT NULL,
  fqn         TEXT NOT NULL,
  package     TEXT,
  signature   TEXT,
  doc         TEXT,
  language    TEXT NOT NULL,
  start_line  INTEGER NOT NULL,
  end_line    INTEGER NOT NULL,
  parent      TEXT,
  PRIMARY KEY (namespace, id)
);
CREATE INDEX graph_nodes_by_name ON graph_nodes (namespace, name);
CREATE INDEX graph_nodes_by_fqn ON graph_nodes (namespace, fqn);
CREATE INDEX graph_nodes_by_path ON graph_nodes (namespace, path);

CREATE TABLE graph_edges (
  namespace   TEXT NOT NULL,
  src         TEXT NOT NULL,
  dst         TEXT,                     -- NULL: external (known by dst_name only)
  dst_name    TEXT NOT NULL,
  kind        TEXT NOT NULL,            -- CONTAINS, CALLS, IMPORTS, EXTENDS, IMPLEMENTS, REFERENCES
  confidence  REAL NOT NULL,
  path        TEXT NOT NULL,            -- file of the site
  line        INTEGER NOT NULL,
  resolution  TEXT NOT NULL             -- syntax, scope, same-file, import, same-package, unique-name, external
);
CREATE INDEX graph_edges_by_src ON graph_edges (namespace, src, kind);
CREATE INDEX graph_edges_by_dst ON graph_edges (namespace, dst, kind);
CREATE INDEX graph_edges_by_path ON graph_edges (namespace, path);

-- Each file's graph as extracted (before cross-file resolution), the input of re-resolution.
CREATE TABLE graph_files (
  namespace   TEXT NOT NULL,
  path        TEXT NOT NULL,
  graph       TEXT NOT NULL,            -- FileGraph JSON (the core's serialization)
  PRIMARY KEY (namespace, path)
);
