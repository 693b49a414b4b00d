-- An ENDPOINT node's HTTP route (as written, `/users/{id}`) and method (`GET`, … or `ANY`), kept
-- so that symbol lookups show which request a handler serves. Rows written before this migration
-- get theirs from the file graph stored with them (the core's serialization carries both), so no
-- re-index is needed; other nodes keep NULL.
ALTER TABLE graph_nodes ADD COLUMN route TEXT;
ALTER TABLE graph_nodes ADD COLUMN http_method TEXT;

UPDATE graph_nodes
SET (route, http_method) = (
  SELECT json_extract(n.value, '$.route'), json_extract(n.value, '$.httpMethod')
  FROM graph_files f, json_each(f.graph, '$.nodes') n
  WHERE f.namespace = graph_nodes.namespace
    AND f.path = graph_nodes.path
    AND json_extract(n.value, '$.id') = graph_nodes.id
)
WHERE kind = 'ENDPOINT';
