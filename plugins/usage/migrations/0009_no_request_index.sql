-- Nothing in the gateway looks usage records up by request_id, and the index on it (a random id per row) was the
-- dearest of the table's five for every row written: about 15% of the embedded database's time per insert.
DROP INDEX IF EXISTS usage_records_request;
