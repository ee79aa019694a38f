-- additive: a generated column and an index, which a bookbot that does not
-- know them never reads, and whose values PostgreSQL keeps whoever writes.
-- Whether an offer's Workflow Builder step has not ended (offer.Store's
-- Steps): it has a "step" field and no "step_ended" one, names that no
-- string spells, whose quotes JSON escapes (offer.EncodedStepOpen tests the
-- same in Go). As in 0012, encode(…, 'escape') reads the bytes as text.
ALTER TABLE bookbot_offers ADD COLUMN step_open boolean GENERATED ALWAYS AS (
	position('"step":' in encode(offer, 'escape')) > 0 AND
	position('"step_ended":' in encode(offer, 'escape')) = 0
) STORED;
CREATE INDEX bookbot_offers_step_open ON bookbot_offers (id) WHERE step_open;
