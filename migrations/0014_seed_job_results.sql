-- A seed job's results, one row per saved chunk (rows first_row.. of the job). Jobs saved
-- before this keep theirs in seed_jobs.results_json, which the chunks follow. Writing each
-- chunk once replaces rewriting every result so far after each chunk.
CREATE TABLE seed_job_results (
    job_id        TEXT NOT NULL,
    first_row     BIGINT NOT NULL,
    results_json  TEXT NOT NULL,
    PRIMARY KEY (job_id, first_row)
);
