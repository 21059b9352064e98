-- Functions, workflows, calls and their events: the document pipeline.
-- Versions are immutable rows; the head row only names the current version.
CREATE TABLE functions (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL,
    environment      TEXT NOT NULL,
    name             TEXT NOT NULL,
    current_version  BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (account_id, environment, name)
);

-- `body` is the function at that version as JSON (type, displayName, tags, outputSchema,
-- the type's own settings and extraConfig); `audit` its audit records.
CREATE TABLE function_versions (
    function_id   TEXT NOT NULL REFERENCES functions(id) ON DELETE CASCADE,
    version_num   BIGINT NOT NULL,
    function_type TEXT NOT NULL,
    body          TEXT NOT NULL,
    audit         TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (function_id, version_num)
);

CREATE TABLE workflows (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL,
    environment      TEXT NOT NULL,
    name             TEXT NOT NULL,
    current_version  BIGINT NOT NULL,
    display_name     TEXT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (account_id, environment, name)
);

-- `body`: displayName, tags, mainNodeName, nodes (each with its function pinned to a
-- version), edges, audit.
CREATE TABLE workflow_versions (
    workflow_id  TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    version_num  BIGINT NOT NULL,
    body         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (workflow_id, version_num)
);

-- Which function versions each workflow version's nodes run: the workflow list filters
-- and a function version's `usedInWorkflows` read this.
CREATE TABLE workflow_version_functions (
    workflow_id           TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    workflow_version_num  BIGINT NOT NULL,
    function_id           TEXT NOT NULL,
    function_name         TEXT NOT NULL,
    function_version_num  BIGINT NOT NULL
);
CREATE INDEX workflow_version_functions_function ON workflow_version_functions(function_id, function_version_num);
CREATE INDEX workflow_version_functions_workflow ON workflow_version_functions(workflow_id, workflow_version_num);

-- One execution of a workflow version. `input` is the submitted file(s) as JSON with
-- base64 content and `plan` the workflow version with its function versions as resolved
-- at submission, so a call can be re-run after a crash from the record alone.
CREATE TABLE calls (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL,
    environment           TEXT NOT NULL,
    workflow_id           TEXT NOT NULL,
    workflow_name         TEXT NOT NULL,
    workflow_version_num  BIGINT NOT NULL,
    reference_id          TEXT,
    status                TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    input                 TEXT NOT NULL,
    plan                  TEXT NOT NULL,
    metadata              TEXT,
    bucket                TEXT,
    created_at            BIGINT NOT NULL,
    finished_at           BIGINT
);
CREATE INDEX calls_tenant ON calls(account_id, environment, id);

-- The deduplication window of `callReferenceID`: one row per workflow and reference.
CREATE TABLE call_references (
    account_id    TEXT NOT NULL,
    environment   TEXT NOT NULL,
    workflow_id   TEXT NOT NULL,
    reference_id  TEXT NOT NULL,
    call_id       TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (account_id, environment, workflow_id, reference_id)
);

-- One run of one node on one item. `item_key` tells fan-out runs apart (the split item a
-- run descends from); the unique key is what makes a resumed call skip finished runs.
CREATE TABLE function_calls (
    id                       TEXT PRIMARY KEY,
    call_id                  TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
    node_name                TEXT NOT NULL,
    item_key                 TEXT NOT NULL,
    function_id              TEXT NOT NULL,
    function_name            TEXT NOT NULL,
    function_version_num     BIGINT NOT NULL,
    function_type            TEXT NOT NULL,
    status                   TEXT NOT NULL,
    input                    TEXT,
    output                   TEXT,
    error                    TEXT,
    source_event_id          TEXT,
    source_function_call_id  TEXT,
    incoming_destination     TEXT,
    started_at               BIGINT NOT NULL,
    finished_at              BIGINT,
    UNIQUE (call_id, node_name, item_key)
);

-- Pipeline events share the events table with collection events; these columns are what
-- the event, output and error lists filter on. `dedupe_key` (unique) makes emitting an
-- event idempotent when a call resumes.
ALTER TABLE events ADD COLUMN call_id TEXT;
ALTER TABLE events ADD COLUMN function_call_id TEXT;
ALTER TABLE events ADD COLUMN workflow_id TEXT;
ALTER TABLE events ADD COLUMN workflow_name TEXT;
ALTER TABLE events ADD COLUMN function_id TEXT;
ALTER TABLE events ADD COLUMN function_name TEXT;
ALTER TABLE events ADD COLUMN function_version_num BIGINT;
ALTER TABLE events ADD COLUMN reference_id TEXT;
ALTER TABLE events ADD COLUMN intermediate BIGINT NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN labelled BIGINT NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN dedupe_key TEXT;
CREATE UNIQUE INDEX events_dedupe ON events(dedupe_key);
CREATE INDEX events_call ON events(call_id);
