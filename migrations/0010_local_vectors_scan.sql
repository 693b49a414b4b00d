-- The local vector index scans a namespace page by page in rowid order
-- (`WHERE namespace = ? AND dims = ? AND rowid > ? ORDER BY rowid LIMIT n`). Without this index
-- SQLite answers each page through the (namespace, id) unique index plus a sort, which makes a
-- full scan quadratic in the namespace size; an index on (namespace, dims) is ordered by rowid
-- within each key, so every page is a direct range read.
CREATE INDEX IF NOT EXISTS local_vectors_scan ON local_vectors (namespace, dims);
