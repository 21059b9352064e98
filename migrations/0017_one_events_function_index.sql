-- Every query of events by function also names the tenant (output counts, a version's
-- outputs, regression samples, the event list's function filter), and none orders by
-- creation time any more (views read event_outputs). One index answers them all, where two
-- were written with every event: a workflow call's second commit wrote three fewer pages.
DROP INDEX events_function;
DROP INDEX events_function_time;
CREATE INDEX events_function_version ON events(account_id, environment, function_id, function_version_num);
