-- Jobs carry the account whose work they are, so workers can share themselves across
-- tenants (a per-account cap on running jobs); jobs of no account (maintenance) have none.
-- `interruptions` counts attempts whose worker stopped while running them (a crash, a
-- kill): past the job's attempt limit such a job fails instead of being run again, so a
-- call that kills canon cannot kill it at every start. A call that failed that way keeps
-- the reason in `calls.error`, which the call shows among its errors.
ALTER TABLE jobs ADD COLUMN account_id TEXT;
ALTER TABLE jobs ADD COLUMN interruptions BIGINT NOT NULL DEFAULT 0;
CREATE INDEX jobs_running_accounts ON jobs(status, account_id);
ALTER TABLE calls ADD COLUMN error TEXT;
