package digest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// DefaultStaleAfter is how long a claim may stay unfinished before the
// ledger decides its process died mid-post and treats the date as posted.
// A Runner bounds each run well below it (runTimeout), so a live run never
// holds a claim this long.
const DefaultStaleAfter = 10 * time.Minute

// Ledger records which dates were posted, as files under a state directory;
// it survives restarts and is shared by overlapping processes on one machine
// (a file is claimed with O_CREATE|O_EXCL, which the kernel makes atomic; do
// not put the directory on a network file system that does not honour it).
//
// Each date has one file, dir/digest/YYYY-MM-DD.json, holding a claim while
// a post is under way and the post's record once it is done; the failure
// notice of a date has its own file, YYYY-MM-DD.failure.json.
//
// The fields may be set after OpenLedger and before the ledger is used.
type Ledger struct {
	// StaleAfter is how old an unfinished claim must be to count as the
	// claim of a dead process; 0 means DefaultStaleAfter.
	StaleAfter time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Log receives the loud warning about stale claims (nil: discarded).
	Log *slog.Logger

	dir string // .../digest
}

// State is where a date stands in the ledger.
type State int

const (
	StateNone    State = iota // never claimed, or released
	StateClaimed              // a post is under way (or its process died: see Status.Stale)
	StatePosted               // posted, or recorded as posted
)

func (s State) String() string {
	switch s {
	case StateNone:
		return "none"
	case StateClaimed:
		return "claimed"
	case StatePosted:
		return "posted"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// PostInfo is what the ledger keeps about a post.
type PostInfo struct {
	At      time.Time `json:"at"`
	Channel string    `json:"channel,omitempty"`
	TS      string    `json:"ts,omitempty"` // the (first) message's timestamp, when the publisher reports it
	Entries int       `json:"entries"`
	Empty   bool      `json:"empty,omitempty"` // nothing was booked; with SkipEmpty, no message was sent
	// Uncertain is set when the publisher could not tell whether the post
	// reached the channel; the date is recorded as posted all the same.
	Uncertain bool `json:"uncertain,omitempty"`
}

// Status is a date's entry in the ledger.
type Status struct {
	State     State
	ClaimedAt time.Time // when the date was claimed (StateClaimed, StatePosted)
	Info      PostInfo  // StatePosted only
	// Stale is set for a claim older than StaleAfter that was never
	// completed: its process most likely died mid-post. It is treated as
	// posted, so Claim refuses it.
	Stale bool
}

// Done reports whether the date must not be posted again: it was posted,
// or its claim is stale.
func (s Status) Done() bool { return s.State == StatePosted || s.Stale }

// record is the file format.
type record struct {
	State     string    `json:"state"` // "claimed" or "posted"
	ClaimedAt time.Time `json:"claimed_at,omitzero"`
	PID       int       `json:"pid,omitempty"`
	Posted    *PostInfo `json:"posted,omitempty"`
}

// OpenLedger opens the ledger under dir, creating dir (0o700) and
// dir/digest if needed.
func OpenLedger(dir string) (*Ledger, error) {
	if dir == "" {
		return nil, errors.New("digest ledger: no state directory")
	}
	sub := filepath.Join(dir, "digest")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return nil, fmt.Errorf("digest ledger: %w", err)
	}
	return &Ledger{dir: sub}, nil
}

// Dir is the directory holding the ledger's files.
func (l *Ledger) Dir() string { return l.dir }

// Claim atomically claims the date: true when this caller may post it,
// false when it is already claimed or posted. The date is day's calendar
// date in day's own location.
//
// A claim older than StaleAfter that was never completed is treated as
// posted and logged as an error. This is a deliberate trade-off: a process
// that died mid-post may or may not have reached Slack, and a digest that
// arrives twice is worse than one that is missed once, so the date is not
// retried; the log tells a person to check the channel.
func (l *Ledger) Claim(day time.Time) (bool, error) { return l.claim(dateKey(day)) }

// Posted marks the date done. The file is replaced atomically (written
// aside, synced, renamed), so a reader sees either the claim or the record.
func (l *Ledger) Posted(day time.Time, info PostInfo) error { return l.posted(dateKey(day), info) }

// Release drops the date's claim after a failed post, so the date may be
// tried again. Releasing an unclaimed date does nothing; a posted date
// cannot be released.
func (l *Ledger) Release(day time.Time) error { return l.release(dateKey(day)) }

// Status reports where the date stands.
func (l *Ledger) Status(day time.Time) (Status, error) { return l.status(dateKey(day)) }

func dateKey(day time.Time) string { return day.Format(time.DateOnly) }

func failureKey(day time.Time) string { return dateKey(day) + ".failure" }

func (l *Ledger) path(key string) string { return filepath.Join(l.dir, key+".json") }

func (l *Ledger) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Ledger) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (l *Ledger) staleAfter() time.Duration {
	if l.StaleAfter > 0 {
		return l.StaleAfter
	}
	return DefaultStaleAfter
}

func (l *Ledger) claim(key string) (bool, error) {
	path := l.path(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if _, err := l.status(key); err != nil { // logs a stale claim
			return false, err
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("digest ledger: claim %s: %w", key, err)
	}
	raw, err := json.Marshal(record{State: "claimed", ClaimedAt: l.now().UTC(), PID: os.Getpid()})
	if err == nil {
		_, err = f.Write(raw)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// Undo the claim so the date is not blocked by a file nobody owns.
		_ = os.Remove(path)
		return false, fmt.Errorf("digest ledger: claim %s: %w", key, err)
	}
	syncDir(l.dir)
	return true, nil
}

func (l *Ledger) posted(key string, info PostInfo) error {
	rec := record{State: "posted", Posted: &info}
	if old, err := l.read(key); err == nil {
		rec.ClaimedAt, rec.PID = old.ClaimedAt, old.PID
	}
	raw, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("digest ledger: record %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(l.dir, "."+key+".*.tmp")
	if err != nil {
		return fmt.Errorf("digest ledger: record %s: %w", key, err)
	}
	_, err = tmp.Write(append(raw, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), l.path(key))
	}
	if err != nil {
		_ = os.Remove(tmp.Name()) // best effort; a leftover temp file is ignored
		return fmt.Errorf("digest ledger: record %s: %w", key, err)
	}
	syncDir(l.dir)
	return nil
}

func (l *Ledger) release(key string) error {
	st, err := l.status(key)
	if err != nil {
		return err
	}
	switch st.State {
	case StateNone:
		return nil
	case StatePosted:
		return fmt.Errorf("digest ledger: %s was posted and cannot be released", key)
	}
	if err := os.Remove(l.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("digest ledger: release %s: %w", key, err)
	}
	syncDir(l.dir)
	return nil
}

// read returns the file's record; an empty or unreadable file (a process
// died between creating and writing it) is a claim aged by its mtime.
func (l *Ledger) read(key string) (record, error) {
	path := l.path(key)
	raw, err := os.ReadFile(path)
	if err != nil {
		return record{}, err
	}
	var rec record
	if json.Unmarshal(raw, &rec) != nil || (rec.State != "claimed" && rec.State != "posted") {
		rec = record{State: "claimed"}
	}
	if rec.State == "claimed" && rec.ClaimedAt.IsZero() {
		if fi, err := os.Stat(path); err == nil {
			rec.ClaimedAt = fi.ModTime()
		}
	}
	return rec, nil
}

func (l *Ledger) status(key string) (Status, error) {
	rec, err := l.read(key)
	if errors.Is(err, fs.ErrNotExist) {
		return Status{State: StateNone}, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("digest ledger: status %s: %w", key, err)
	}
	st := Status{ClaimedAt: rec.ClaimedAt}
	if rec.State == "posted" {
		st.State = StatePosted
		if rec.Posted != nil {
			st.Info = *rec.Posted
		}
		return st, nil
	}
	st.State = StateClaimed
	if age := l.now().Sub(rec.ClaimedAt); age > l.staleAfter() {
		st.Stale = true
		l.log().Error("digest: a claim was never completed, treating the date as posted; "+
			"the process that claimed it probably died mid-post, so check the channel and post by hand if the digest is missing",
			slog.String("key", key), slog.Time("claimed_at", rec.ClaimedAt), slog.Duration("age", age.Round(time.Second)),
			slog.Int("pid", rec.PID), slog.String("file", l.path(key)))
	}
	return st, nil
}

// syncDir makes a create, rename or remove in dir durable. It is best
// effort: some systems cannot sync a directory, and the file operations
// themselves have already succeeded.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
