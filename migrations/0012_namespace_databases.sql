-- Which D1 database holds a namespace's rows (files, chunks, FTS, local vectors, jobs, staging,
-- runs), when the worker spreads namespaces over several (`D1_BINDINGS="DB,DB_2"`). Read and
-- written only in the first database (the catalog); created in every database so one migration
-- set applies to all of them. A namespace without a row lives in the first database (where every
-- namespace lived before there was a choice).
CREATE TABLE IF NOT EXISTS namespace_databases (
  namespace  TEXT PRIMARY KEY,
  binding    TEXT NOT NULL,
  created_at TEXT NOT NULL
);
