-- The canon processes serving this record store, so an instance can see whether another is
-- live (heartbeat) before it opens a store only one process can own (the embedded vector
-- store). A stopped instance deletes its row; a crashed one stops beating.
CREATE TABLE instances (
    id            TEXT PRIMARY KEY,
    host          TEXT NOT NULL,
    pid           BIGINT NOT NULL,
    vectors       TEXT NOT NULL,
    started_at    BIGINT NOT NULL,
    heartbeat_at  BIGINT NOT NULL
);
