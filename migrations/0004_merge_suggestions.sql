-- Candidate duplicate pairs found by the duplicate detector; a decided pair (accepted or
-- dismissed) is kept so it is never suggested again.
CREATE TABLE merge_suggestions (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    bucket_id    TEXT NOT NULL,
    entity_a     TEXT NOT NULL,
    entity_b     TEXT NOT NULL,
    score        DOUBLE PRECISION NOT NULL,
    signals      TEXT NOT NULL,
    status       TEXT NOT NULL,
    decided_by   TEXT,
    decided_at   BIGINT,
    created_at   BIGINT NOT NULL,
    UNIQUE (account_id, environment, entity_a, entity_b)
);
CREATE INDEX merge_suggestions_open ON merge_suggestions(account_id, environment, status, score);
