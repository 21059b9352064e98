-- Where in its Box folder a connector's next poll reads from, kept with the connector so a
-- restart, or another instance on the same records, goes on from there instead of reading
-- the folder from its first item again.
ALTER TABLE connectors ADD COLUMN poll_offset BIGINT NOT NULL DEFAULT 0;
