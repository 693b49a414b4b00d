-- A staged file's content over the D1 value budget (1 MB, half of D1's 2 MB value limit; a file
-- may be up to MAX_FILE_BYTES, 1 MiB by default) is stored in two values: `content` holds its
-- first part (at most the budget, cut at a character boundary) and `content_tail` the rest. The
-- chunk stage reads `content || COALESCE(content_tail, '')`; both are cleared together.
ALTER TABLE job_files ADD COLUMN content_tail TEXT;
