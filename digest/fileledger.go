package digest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// FileLedger is the Ledger as files under a state directory; it survives
// restarts and is shared by overlapping processes on one machine (a file
// is claimed with O_CREATE|O_EXCL, which the kernel makes atomic; do not
// put the directory on a network file system that does not honour it).
//
// Each date has one file, dir/digest/YYYY-MM-DD.json, holding a claim while
// a post is under way and the post's record once it is done; the failure
// notice of a date has its own file, YYYY-MM-DD.failure.json.
//
// The fields may be set after OpenLedger and before the ledger is used.
type FileLedger struct {
	LedgerOptions

	dir string // .../digest
}

var _ Ledger = (*FileLedger)(nil)

// record is the file format.
type record struct {
	State     string    `json:"state"` // "claimed" or "posted"
	ClaimedAt time.Time `json:"claimed_at,omitzero"`
	PID       int       `json:"pid,omitempty"`
	Posted    *PostInfo `json:"posted,omitempty"`
}

// OpenLedger opens the ledger under dir, creating dir (0o700) and
// dir/digest if needed.
func OpenLedger(dir string) (*FileLedger, error) {
	if dir == "" {
		return nil, errors.New("digest ledger: no state directory")
	}
	sub := filepath.Join(dir, "digest")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return nil, fmt.Errorf("digest ledger: %w", err)
	}
	return &FileLedger{dir: sub}, nil
}

// Dir is the directory holding the ledger's files.
func (l *FileLedger) Dir() string { return l.dir }

// Claim atomically claims the date (see Ledger).
func (l *FileLedger) Claim(ctx context.Context, day time.Time) (bool, error) {
	return l.claim(ctx, dateKey(day))
}

// Posted marks the date done. The file is replaced atomically (written
// aside, synced, renamed), so a reader sees either the claim or the record.
func (l *FileLedger) Posted(ctx context.Context, day time.Time, info PostInfo) error {
	return l.posted(ctx, dateKey(day), info)
}

// Release drops the date's claim (see Ledger).
func (l *FileLedger) Release(ctx context.Context, day time.Time) error {
	return l.release(ctx, dateKey(day))
}

// Status reports where the date stands.
func (l *FileLedger) Status(ctx context.Context, day time.Time) (Status, error) {
	if err := ctx.Err(); err != nil {
		return Status{}, fmt.Errorf("digest ledger: status %s: %w", dateKey(day), err)
	}
	return l.status(dateKey(day))
}

// ClaimNotice claims the date's failure notice.
func (l *FileLedger) ClaimNotice(ctx context.Context, day time.Time) (bool, error) {
	return l.claim(ctx, failureKey(day))
}

// NoticePosted records the date's failure notice as posted.
func (l *FileLedger) NoticePosted(ctx context.Context, day time.Time, info PostInfo) error {
	return l.posted(ctx, failureKey(day), info)
}

// ReleaseNotice drops the claim of the date's failure notice.
func (l *FileLedger) ReleaseNotice(ctx context.Context, day time.Time) error {
	return l.release(ctx, failureKey(day))
}

func (l *FileLedger) path(key string) string { return filepath.Join(l.dir, key+".json") }

func (l *FileLedger) claim(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("digest ledger: claim %s: %w", key, err)
	}
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

func (l *FileLedger) posted(ctx context.Context, key string, info PostInfo) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("digest ledger: record %s: %w", key, err)
	}
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

func (l *FileLedger) release(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("digest ledger: release %s: %w", key, err)
	}
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
func (l *FileLedger) read(key string) (record, error) {
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

func (l *FileLedger) status(key string) (Status, error) {
	rec, err := l.read(key)
	if errors.Is(err, fs.ErrNotExist) {
		return Status{State: StateNone}, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("digest ledger: status %s: %w", key, err)
	}
	if rec.State == "posted" {
		st := Status{State: StatePosted, ClaimedAt: rec.ClaimedAt}
		if rec.Posted != nil {
			st.Info = *rec.Posted
		}
		return st, nil
	}
	return l.ClaimStatus(key, rec.ClaimedAt, slog.Int("pid", rec.PID), slog.String("file", l.path(key))), nil
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
