-- Vector ids of chunks that a committed index batch deleted, waiting for their vectors to be
-- deleted from the vector index. The index stage stages them in the same D1 batch that deletes
-- the chunks and deletes the vectors only after that batch commits, so while a batch keeps failing
-- the old version keeps its vectors (found by vector search as well as by keyword). A redelivered
-- message finishes the deletes of a batch that committed before the worker died.
CREATE TABLE IF NOT EXISTS pending_vector_deletes (
  namespace TEXT NOT NULL,
  id        TEXT NOT NULL,
  job_id    TEXT NOT NULL,
  PRIMARY KEY (namespace, id)
);
