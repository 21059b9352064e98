-- The due scan reads only pending deliveries, so its index holds only those: a delivery that
-- settles leaves it (one entry deleted) instead of moving within it (deleted and inserted
-- again), and the index stays the size of the backlog, not of every delivery ever made.
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status = 'pending';
