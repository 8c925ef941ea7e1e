-- The gate's verdict on each completed step of a review session (JSON array of fail reasons).
ALTER TABLE review_session_steps ADD COLUMN gate_reasons TEXT;
