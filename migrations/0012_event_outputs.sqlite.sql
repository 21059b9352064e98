-- What views read: each output event's transformedContent once more, as SQLite's binary
-- JSON (3.45+), beside the columns a view is scoped by. Reading a path out of it skips
-- parsing the whole event's text, which was most of a table-data or aggregation-data
-- request. Written in the same transaction as its event; events are never rewritten in
-- what this copies (a correction adds to the body, not to transformedContent).
CREATE TABLE event_outputs (
    event_id     TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    function_id  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    content      BLOB
);
CREATE INDEX event_outputs_scope ON event_outputs(account_id, environment, function_id, created_at);

INSERT INTO event_outputs (event_id, account_id, environment, function_id, created_at, content)
SELECT id, account_id, environment, function_id, created_at, jsonb(body -> '$.transformedContent')
FROM events WHERE function_id IS NOT NULL AND event_type <> 'error';
