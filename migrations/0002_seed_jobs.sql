-- Bulk seed jobs: the submitted rows, progress, and the per-row results so far. Progress is
-- saved after every chunk, so a restart resumes at the first unsaved chunk.
CREATE TABLE seed_jobs (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL,
    environment     TEXT NOT NULL,
    bucket_id       TEXT NOT NULL,
    status          TEXT NOT NULL,
    total_rows      BIGINT NOT NULL,
    processed_rows  BIGINT NOT NULL DEFAULT 0,
    rows_json       TEXT NOT NULL,
    results_json    TEXT NOT NULL,
    error           TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
