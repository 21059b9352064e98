-- Collections, their items and the events recorded when items finish embedding.
-- A collection's name is its path (`customers.premium`); the hierarchy is by name, so a
-- subtree is the collection and every name that starts with it and a dot.
CREATE TABLE collections (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    name         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (account_id, environment, name)
);

-- An item's vectors live in the vector store; this row is the source of truth for its data
-- and state. `event_id` is the write whose data the row holds: an embedding job only touches
-- rows still at its own event, so a newer write always wins.
CREATE TABLE collection_items (
    id             TEXT PRIMARY KEY,
    collection_id  TEXT NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    account_id     TEXT NOT NULL,
    environment    TEXT NOT NULL,
    data           TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('pending', 'embedded', 'failed')),
    error          TEXT,
    event_id       TEXT NOT NULL,
    attempts       BIGINT NOT NULL DEFAULT 0,
    chunks         BIGINT NOT NULL DEFAULT 0,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
CREATE INDEX collection_items_collection ON collection_items(collection_id, id);
CREATE INDEX collection_items_event ON collection_items(event_id);

-- Events of every kind, newest last by KSUID; the body is the event as delivered.
CREATE TABLE events (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    body         TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX events_tenant ON events(account_id, environment, id);
