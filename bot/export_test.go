package bot

// HeldOut is how much work waited all of ackFirstFor for envelopes still
// being handled.
func HeldOut(b *Bot) int64 { return b.heldOut.Load() }

// Signed is meta signed as bookbot signs a view of callbackID's.
func Signed(b *Bot, callbackID, meta string) string { return b.signer.sign(callbackID, meta) }

// Unsigned is a view's signed metadata without its signature.
func Unsigned(b *Bot, callbackID, signed string) string {
	meta, _ := b.signer.open(callbackID, signed)
	return meta
}
