-- Each entity's curation history that the graph does not keep itself: status decisions and
-- their undoing, synonym and name edits, type changes and decisions on merge suggestions,
-- each with who (a user or an API key ID) and when. Merges keep their own record in the
-- graph; the timeline reads both. `details` is JSON text.
CREATE TABLE entity_audit (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    kind         TEXT NOT NULL,
    actor        TEXT NOT NULL,
    at           BIGINT NOT NULL,
    details      TEXT NOT NULL
);
CREATE INDEX entity_audit_timeline ON entity_audit(account_id, environment, entity_id, at, id);
-- A decision taken with the scores hidden (the dashboard's blind mode): 1, else 0.
ALTER TABLE merge_suggestions ADD COLUMN blind BIGINT NOT NULL DEFAULT 0;
