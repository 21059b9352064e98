-- Each dataset's number of rows, kept as rows are written and deleted: every read of a
-- dataset (each list page of 100) counted its rows anew (COUNT(DISTINCT row_key) over its
-- cells), and the count bounds a dataset's rows on write.
ALTER TABLE datasets ADD COLUMN row_count BIGINT NOT NULL DEFAULT 0;
UPDATE datasets SET row_count = (
    SELECT COUNT(DISTINCT c.row_key) FROM dataset_cells c WHERE c.dataset_id = datasets.id);
