-- The GitHub App: which installation a repository came from (installation webhooks add and
-- remove repositories; the fetch stage asks for that installation's token). NULL for
-- repositories registered through the API (fetched with GITHUB_TOKEN, if any).
ALTER TABLE github_repos ADD COLUMN installation_id INTEGER;
