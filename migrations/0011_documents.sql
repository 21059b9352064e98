-- Parsed documents: one row per run of a parse (or linking) function over a decoded input,
-- with its structure as searchable items (sections, and the entities and relationships
-- linking found in it). The full-text index over `document_items.text` differs per
-- dialect and is created after the migrations (store::records::documents::ensure_search_index).

CREATE TABLE documents (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL,
    environment        TEXT NOT NULL,
    reference_id       TEXT NOT NULL,
    call_id            TEXT NOT NULL,
    function_id        TEXT NOT NULL,
    function_name      TEXT NOT NULL,
    input_type         TEXT NOT NULL,
    file_name          TEXT,
    bucket_id          TEXT,
    memory_linked      BIGINT NOT NULL DEFAULT 0,
    page_count         BIGINT NOT NULL,
    section_count      BIGINT NOT NULL,
    output             TEXT NOT NULL,
    created_at         BIGINT NOT NULL
);
CREATE INDEX documents_tenant ON documents(account_id, environment, id);
CREATE INDEX documents_reference ON documents(account_id, environment, reference_id, id);

-- `scope`: sections, entities or relationships; `position` orders a document's items; the
-- ID (`<documentID>:<scope letter>:<position, zero-padded>`) sorts like (document, scope,
-- position), which is what grep pages by.
CREATE TABLE document_items (
    id            TEXT PRIMARY KEY,
    document_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    account_id    TEXT NOT NULL,
    environment   TEXT NOT NULL,
    scope         TEXT NOT NULL,
    position      BIGINT NOT NULL,
    label         TEXT NOT NULL,
    item_type     TEXT NOT NULL,
    page          BIGINT,
    entity_id     TEXT,
    text          TEXT NOT NULL
);
CREATE INDEX document_items_tenant ON document_items(account_id, environment, id);
CREATE INDEX document_items_document ON document_items(document_id, id);

-- Connectors: an outside system that starts calls of a workflow. A `box` connector watches
-- a Box folder; `connector_files` remembers each file it submitted, so a file is submitted
-- once (the row is claimed before the call is made).
CREATE TABLE connectors (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL,
    environment         TEXT NOT NULL,
    name                TEXT NOT NULL,
    type                TEXT NOT NULL,
    workflow_id         TEXT NOT NULL,
    workflow_name       TEXT NOT NULL,
    box_client_id       TEXT,
    box_client_secret   TEXT,
    box_enterprise_id   TEXT,
    box_folder_id       TEXT,
    created_at          BIGINT NOT NULL
);
CREATE INDEX connectors_tenant ON connectors(account_id, environment, id);
CREATE INDEX connectors_workflow ON connectors(workflow_id);

CREATE TABLE connector_files (
    connector_id   TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
    file_id        TEXT NOT NULL,
    call_id        TEXT,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (connector_id, file_id)
);
