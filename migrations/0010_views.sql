-- Views: a head row per view (name and current version, what the list filters on) and one
-- immutable row per version holding the whole definition as JSON.
CREATE TABLE views (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL,
    environment      TEXT NOT NULL,
    name             TEXT NOT NULL,
    current_version  BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX views_tenant ON views(account_id, environment, id);

CREATE TABLE view_versions (
    view_id      TEXT NOT NULL REFERENCES views(id) ON DELETE CASCADE,
    version_num  BIGINT NOT NULL,
    body         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (view_id, version_num)
);

-- The functions the current version reads (the list's functionIDs / functionNames filters).
CREATE TABLE view_functions (
    view_id      TEXT NOT NULL REFERENCES views(id) ON DELETE CASCADE,
    function_id  TEXT NOT NULL,
    PRIMARY KEY (view_id, function_id)
);
CREATE INDEX view_functions_function ON view_functions(function_id);

-- table-data and aggregation-data read the events of a few functions in a time window.
CREATE INDEX events_function_time ON events(account_id, environment, function_id, created_at);

-- Golden datasets: typed columns with a role, rows keyed by the tenant's row key, one
-- stored value per (row, column).
CREATE TABLE datasets (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    columns      TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX datasets_tenant ON datasets(account_id, environment, id);

CREATE TABLE dataset_cells (
    dataset_id   TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    row_key      TEXT NOT NULL,
    column_name  TEXT NOT NULL,
    value        TEXT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, row_key, column_name)
);
