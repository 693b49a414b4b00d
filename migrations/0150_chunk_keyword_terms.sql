-- What a namespace's keyword index (`kw_<hex>`) holds in its path and name columns for a chunk:
-- the path or name and, beside it, the words FTS5 would keep as one token (`TypeSpec.java` →
-- `… type spec`, `addModifiers` → `addModifiers add modifiers`), written by the chunk stage
-- (`edgerag_core::text::keyword_terms`). NULL when the text alone already is its words
-- (`src/de.rs`, `to_vec_pretty`), and for rows from before this migration: the index then holds
-- `path` / `symbol_name`. Every trigger reads `COALESCE(path_terms, path)` and
-- `COALESCE(symbol_terms, symbol_name)`, so what a row was indexed with is what its deletion removes.
ALTER TABLE chunks ADD COLUMN path_terms TEXT;
ALTER TABLE chunks ADD COLUMN symbol_terms TEXT;
