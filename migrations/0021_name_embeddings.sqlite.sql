-- Name embeddings a merge-suggestion refresh computed, kept for the next refresh (a name's
-- vector under one model never changes). Per tenant; the least recently used are pruned.
CREATE TABLE name_embeddings (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    model        TEXT NOT NULL,
    name         TEXT NOT NULL,
    vector       BLOB NOT NULL,
    used_at      BIGINT NOT NULL,
    PRIMARY KEY (account_id, environment, model, name)
);
CREATE INDEX name_embeddings_used ON name_embeddings(used_at);
