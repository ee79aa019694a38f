-- additive: a generated column and an index, which a bookbot that does not
-- know them never reads, and whose values PostgreSQL keeps whoever writes.
-- Whether an offer holds a time not booked (offer.Store's Unsettled): one
-- of its uses has no "booking". An offer is Go's JSON of offer.Offer,
-- where each use has a "key" and a booked one a "booking": it holds such a
-- time when it counts more of the first than of the second. Counted as
-- text with its quotes and colon, a field's name is never mistaken for a
-- string that spells it, whose quotes JSON escapes (offer.EncodedPending
-- counts the same in Go). encode(…, 'escape') reads the bytes as text,
-- immutably, leaving quotes and colons as they are. Computed for every row
-- here, and by PostgreSQL at each write after.
ALTER TABLE bookbot_offers ADD COLUMN unsettled boolean GENERATED ALWAYS AS (
	(length(encode(offer, 'escape')) - length(replace(encode(offer, 'escape'), '"key":', ''))) / 6 >
	(length(encode(offer, 'escape')) - length(replace(encode(offer, 'escape'), '"booking":', ''))) / 10
) STORED;
CREATE INDEX bookbot_offers_unsettled ON bookbot_offers (id) WHERE unsettled;
