-- Secrets a tenant keeps in canon (language-model keys, S3 credentials, …), referenced by
-- name from function configurations. `sealed` is the value encrypted with the server's
-- secrets key (AES-256-GCM); the plaintext is never stored nor returned.
CREATE TABLE tenant_secrets (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    name         TEXT NOT NULL,
    sealed       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (account_id, environment, name)
);
