-- Views read a tenant's outputs of some functions in a time window, oldest first (by
-- created_at, then event_id). With event_id in the scope index, a page of one function's
-- outputs is read in that order and stops after its rows.
CREATE INDEX event_outputs_view_order ON event_outputs(account_id, environment, function_id, created_at, event_id);
DROP INDEX event_outputs_scope;
