-- The gate's verdict on each completed step of a review session: a JSON array of fail reasons
-- ([] when the step passed), so `session status` can state the verdict from any process.
ALTER TABLE review_session_steps ADD COLUMN gate_reasons TEXT;
