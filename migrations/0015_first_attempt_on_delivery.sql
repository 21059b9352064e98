-- A delivery's first attempt, when it delivered, is kept on the delivery's own row; every
-- other attempt stays a row of delivery_attempts. Nearly every delivery succeeds at once,
-- and writing its attempt as a row of its own was a third of the record store's work per
-- delivery (an insert into the table and into its key). The delivery log reads both.
ALTER TABLE deliveries ADD COLUMN first_attempted_at BIGINT;
ALTER TABLE deliveries ADD COLUMN first_status_code BIGINT;
ALTER TABLE deliveries ADD COLUMN first_latency_ms BIGINT;
ALTER TABLE deliveries ADD COLUMN first_response_excerpt TEXT;
