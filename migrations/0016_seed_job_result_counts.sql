-- How many rows of each saved chunk were created, merged or rejected, so a status read of a
-- running job sums them instead of parsing every result saved so far (up to 10,000, on
-- every poll). Chunks saved before this have no counts and are counted from their results.
ALTER TABLE seed_job_results ADD COLUMN created_count BIGINT;
ALTER TABLE seed_job_results ADD COLUMN merged_count BIGINT;
ALTER TABLE seed_job_results ADD COLUMN rejected_count BIGINT;
