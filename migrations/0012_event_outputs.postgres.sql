-- What views read: each output event's transformedContent once more, as JSONB, beside the
-- columns a view is scoped by. Reading a path out of it skips parsing the whole event's
-- text, which was most of a table-data or aggregation-data request. Written in the same
-- transaction as its event; events are never rewritten in what this copies (a correction
-- adds to the body, not to transformedContent).
CREATE TABLE event_outputs (
    event_id     TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    function_id  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    content      JSONB
);
CREATE INDEX event_outputs_scope ON event_outputs(account_id, environment, function_id, created_at);

-- JSONB refuses the NUL character that a JSON text may escape; such strings get U+FFFD
-- here, as canon does when it writes new rows.
INSERT INTO event_outputs (event_id, account_id, environment, function_id, created_at, content)
SELECT id, account_id, environment, function_id, created_at,
       CAST(replace(body, '\u0000', '\ufffd') AS JSONB) -> 'transformedContent'
FROM events WHERE function_id IS NOT NULL AND event_type <> 'error';
