-- Dashboard users: who curates, and with which role.
CREATE TABLE users (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    environment  TEXT NOT NULL,
    email        TEXT NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('admin', 'operator')),
    created_at   BIGINT NOT NULL,
    UNIQUE (account_id, environment, email)
);
