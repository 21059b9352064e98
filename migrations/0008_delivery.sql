-- Events delivery: subscriptions, the webhook signing secret, and a durable outbox.

CREATE TABLE subscriptions (
    id                      TEXT PRIMARY KEY,
    account_id              TEXT NOT NULL,
    environment             TEXT NOT NULL,
    name                    TEXT NOT NULL,
    type                    TEXT NOT NULL,
    function_id             TEXT,
    collection_id           TEXT,
    collection_name         TEXT,
    disabled                BIGINT NOT NULL DEFAULT 0,
    webhook_url             TEXT,
    s3_bucket               TEXT,
    s3_file_path            TEXT,
    google_drive_folder_id  TEXT,
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL
);
CREATE INDEX subscriptions_tenant ON subscriptions(account_id, environment, id);
CREATE INDEX subscriptions_function ON subscriptions(function_id);
CREATE INDEX subscriptions_collection ON subscriptions(collection_id);

-- One signing secret per environment; `previous_sealed` still signs until `previous_until`
-- (the rotation window). Values are sealed with the server's secrets key.
CREATE TABLE webhook_secrets (
    account_id       TEXT NOT NULL,
    environment      TEXT NOT NULL,
    sealed           TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    previous_sealed  TEXT,
    previous_until   BIGINT,
    PRIMARY KEY (account_id, environment)
);

-- The outbox: one row per (event, subscription, destination), written in the same
-- transaction as the event. `status`: pending, delivered, failed (retries exhausted),
-- disabled (the receiver answered 410 or the subscription went away).
CREATE TABLE deliveries (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL,
    environment      TEXT NOT NULL,
    subscription_id  TEXT NOT NULL,
    event_id         TEXT NOT NULL,
    destination      TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         BIGINT NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    lease_until      BIGINT NOT NULL DEFAULT 0,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
CREATE INDEX deliveries_subscription ON deliveries(subscription_id, id);
CREATE INDEX deliveries_event ON deliveries(event_id, id);

-- Every attempt, for the delivery log.
CREATE TABLE delivery_attempts (
    delivery_id       TEXT NOT NULL,
    attempt           BIGINT NOT NULL,
    attempted_at      BIGINT NOT NULL,
    status_code       BIGINT,
    latency_ms        BIGINT NOT NULL,
    response_excerpt  TEXT,
    error             TEXT,
    next_retry_at     BIGINT,
    PRIMARY KEY (delivery_id, attempt)
);
