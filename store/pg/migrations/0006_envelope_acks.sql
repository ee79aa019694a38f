-- additive: a bookbot without this column runs on it; it keeps no acks, and a redelivery reaching another replica is acked empty, as before.
-- The ack a replica sent for a form submission, kept for a redelivery of
-- it that reaches another replica (Dedupe.KeepAck, Dedupe.Ack): the ack is
-- the view the person sees next, and only the first replica could make it.
-- NULL: none kept (yet); an empty value: the ack was empty.
ALTER TABLE bookbot_envelopes_seen ADD COLUMN ack bytea;
