package bolt

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

// The buckets of format 1, each with claims of its own kind, which
// carryOver moves into the outbox. The import of an earlier bookbot's
// files writes them too, then carries them over in the same transaction.
var (
	// v1DigestLedger maps a date ("2026-11-24") or a date's failure
	// notice ("2026-11-24.failure") to its ledgerRecord.
	v1DigestLedger = []byte("digest.ledger")
	// v1NoticesClaims maps a key's identity (notices.Key's bytes) to its
	// noticeClaim.
	v1NoticesClaims = []byte("notices.claims")
	// v1PersonalClaims maps a claim's key (personal.ReminderKey,
	// personal.AgendaKey) to its personalClaim.
	v1PersonalClaims = []byte("personal.claims")

	v1Buckets = [][]byte{v1DigestLedger, v1NoticesClaims, v1PersonalClaims}
)

// ledgerRecord is a date's record in format 1, as the files of the ledger
// before this store held it too.
type ledgerRecord struct {
	State     string           `json:"state"` // "claimed" or "posted"
	ClaimedAt time.Time        `json:"claimed_at,omitzero"`
	PID       int              `json:"pid,omitempty"` // the process that claimed it
	Posted    *digest.PostInfo `json:"posted,omitempty"`
}

const (
	stateClaimed = "claimed"
	statePosted  = "posted"
)

// noticeClaim is a notice's claim in format 1.
type noticeClaim struct {
	At        time.Time        `json:"at"` // when it was claimed
	BookingID string           `json:"booking_id"`
	Kind      notices.Kind     `json:"kind"`
	Start     time.Time        `json:"start"`
	End       time.Time        `json:"end"`
	Since     time.Time        `json:"since"`
	Message   *notices.Message `json:"message,omitempty"` // where the notice was posted
}

// personalClaim is a reminder's or agenda's claim in format 1.
type personalClaim struct {
	At time.Time `json:"at"` // when it was claimed
}

// upgrade brings a file of an older format up to version, in Open's
// transaction: nothing to do for a new file.
func upgrade(tx *bbolt.Tx, from uint64) error {
	if from == 1 {
		return carryOver(tx)
	}
	return nil
}

// carryOver moves the claims of format 1's buckets into the outbox, under
// the keys the domain packages claim them by now, and deletes the buckets:
// a digest, notice, reminder or agenda claimed or posted before is never
// posted again.
func carryOver(tx *bbolt.Tx) error {
	put := func(key string, r outboxRecord) error {
		if tx.Bucket(outboxBucket).Get([]byte(key)) != nil {
			return nil
		}
		return putOutbox(tx, key, r)
	}
	each := func(name []byte, fn func(k, v []byte) error) error {
		b := tx.Bucket(name)
		if b == nil {
			return nil
		}
		if err := b.ForEach(func(k, v []byte) error {
			if err := fn(k, v); err != nil {
				return fmt.Errorf("carrying %s %q over to the outbox: %w", name, k, err)
			}
			return nil
		}); err != nil {
			return err
		}
		return tx.DeleteBucket(name)
	}

	err := each(v1DigestLedger, func(k, v []byte) error {
		var rec ledgerRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		date, failure := strings.CutSuffix(string(k), ".failure")
		day, err := time.Parse(time.DateOnly, date)
		if err != nil {
			return err
		}
		key := digest.Key(day)
		if failure {
			key = digest.FailureKey(day)
		}
		r := outboxRecord{ClaimedAt: rec.ClaimedAt, Keep: rec.ClaimedAt}
		if rec.PID != 0 {
			r.Claimant = fmt.Sprintf("pid %d", rec.PID)
		}
		if rec.State == statePosted {
			info := digest.PostInfo{}
			if rec.Posted != nil {
				info = *rec.Posted
			}
			if r.ClaimedAt.IsZero() {
				r.ClaimedAt, r.Keep = info.At, info.At
			}
			// The ledger's detail is PostInfo's JSON; it reads the fields
			// that are not where the post is.
			detail, err := json.Marshal(info)
			if err != nil {
				return err
			}
			r.Posted = &outboxPost{At: info.At, Channel: info.Channel, TS: info.TS, Detail: detail}
		}
		return put(key, r)
	})
	if err != nil {
		return err
	}

	err = each(v1NoticesClaims, func(_, v []byte) error {
		var c noticeClaim
		if err := json.Unmarshal(v, &c); err != nil {
			return err
		}
		k := notices.Key{BookingID: c.BookingID, Kind: c.Kind, Start: c.Start, End: c.End, Since: c.Since}
		r := outboxRecord{ClaimedAt: c.At, Keep: c.End}
		if c.Message != nil {
			r.Posted = &outboxPost{Channel: c.Message.Channel, TS: c.Message.TS}
		}
		return put(k.Outbox(), r)
	})
	if err != nil {
		return err
	}

	return each(v1PersonalClaims, func(k, v []byte) error {
		var c personalClaim
		if err := json.Unmarshal(v, &c); err != nil {
			return err
		}
		return put(personal.OutboxKey(string(k)), outboxRecord{ClaimedAt: c.At, Keep: c.At})
	})
}

// putRecord writes a date's record of the ledger's older files into
// format 1's bucket, for carryOver.
func putRecord(tx *bbolt.Tx, key string, rec ledgerRecord) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("digest ledger: %s: %w", key, err)
	}
	return tx.Bucket(v1DigestLedger).Put([]byte(key), v)
}
