package bot

// HeldOut is how much work waited all of ackFirstFor for envelopes still
// being handled.
func HeldOut(b *Bot) int64 { return b.heldOut.Load() }
