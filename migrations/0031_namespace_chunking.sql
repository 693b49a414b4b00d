-- How Markdown and plain-text files of an uploaded or fetched repository are chunked:
-- `parent-child` (parents and children, returned by two-stage retrieval) or `flat` (Markdown
-- sections / line windows). NULL is the default, `flat`. Code files always use the code chunker.
ALTER TABLE namespaces ADD COLUMN chunking TEXT;
