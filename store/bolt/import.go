package bolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/internal/boltfile"
)

// The files an earlier bookbot kept under the state directory, each in the
// newest format it wrote (a file of a newer one is refused), and the
// buckets of each that the import reads.
var older = []struct {
	name    string
	version uint64
	buckets map[string][]byte // its bucket → this store's
}{
	// journal.db of format 0 or 1 kept the attendee's note and zone, which
	// the import drops; of any, it rebuilds the indexes from the entries.
	{"journal.db", 2, map[string][]byte{"entries": journalEntries}},
	{"notices.db", 1, map[string][]byte{"last": noticesLast, "claims": v1NoticesClaims, "threads": noticesThreads}},
	{"personal.db", 1, map[string][]byte{"settings": personalSettings, "claims": v1PersonalClaims}},
}

// olderDigest is the directory of the digest ledger's files, one a date
// (2026-11-24.json) or a date's failure notice (2026-11-24.failure.json).
const olderDigest = "digest"

// olderFiles lists the files of an earlier bookbot under dir.
func olderFiles(dir string) []string {
	var found []string
	for _, o := range older {
		if _, err := os.Stat(filepath.Join(dir, o.name)); err == nil {
			found = append(found, o.name)
		}
	}
	if names, _ := filepath.Glob(filepath.Join(dir, olderDigest, "*.json")); len(names) > 0 {
		found = append(found, olderDigest+"/*.json")
	}
	return found
}

// importOlder makes the file at path from the files of an earlier bookbot
// under dir, when path does not exist and any of those does. The import is
// one transaction into a file beside path, renamed into place once it is
// complete: a crash leaves no path, and the next start imports afresh. The
// older files are only read, and left as they are.
func importOlder(dir, path string, log *slog.Logger) error {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	from := olderFiles(dir)
	if len(from) == 0 {
		return nil
	}
	tmp := path + ".import"
	_ = os.Remove(tmp) // left by a process that died while importing
	counts := map[string]int{}
	_, err := boltfile.OpenWith(tmp, "bookbot", version, boltfile.Options{
		Upgrade: func(tx *bbolt.Tx, _ uint64) error {
			if err := importInto(tx, dir, counts); err != nil {
				return err
			}
			return carryOver(tx)
		},
	}, append(buckets, v1Buckets...)...)
	if err == nil {
		err = rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("importing the state of an earlier bookbot (%s) into %s: %w", strings.Join(from, ", "), path, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	args := []any{"into", path, "from", strings.Join(from, ", ")}
	for _, what := range []string{"journal_entries", "notices_snapshot", "notices_claims", "notices_threads", "personal_settings", "personal_claims", "digest_records"} {
		args = append(args, what, counts[what])
	}
	log.Info("the state of an earlier bookbot was imported into one file; the older files are left as they were, and can be removed once you are satisfied that nothing is missing", args...)
	return nil
}

// importInto copies what the older files under dir hold into tx, counting
// what it copied in counts.
func importInto(tx *bbolt.Tx, dir string, counts map[string]int) error {
	for _, o := range older {
		err := readOlder(filepath.Join(dir, o.name), o.version, func(old *bbolt.Tx) error {
			for from, to := range o.buckets {
				b := old.Bucket([]byte(from))
				if b == nil {
					continue
				}
				if err := copyBucket(b, tx.Bucket(to)); err != nil {
					return fmt.Errorf("%s, bucket %s: %w", o.name, from, err)
				}
				counts[countName(string(to))] += b.Stats().KeyN
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := reindexJournal(tx); err != nil {
		return fmt.Errorf("journal.db: %w", err)
	}
	n, err := importDigest(tx, filepath.Join(dir, olderDigest))
	counts["digest_records"] = n
	return err
}

// countName names what a bucket holds in the import's log line:
// "journal.entries" is journal_entries, "notices.last" the snapshot.
func countName(bucket string) string {
	if bucket == string(noticesLast) {
		return "notices_snapshot"
	}
	return strings.ReplaceAll(bucket, ".", "_")
}

// readOlder runs fn on the bbolt file at path, read-only, if it exists and
// is of a format up to newest.
func readOlder(path string, newest uint64, fn func(*bbolt.Tx) error) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: boltfile.LockWait})
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	defer db.Close()
	return db.View(func(tx *bbolt.Tx) error {
		// A file without a format version was written before they were
		// recorded: format 0.
		if meta := tx.Bucket([]byte("meta")); meta != nil {
			if v := meta.Get([]byte("version")); len(v) == 8 && binary.BigEndian.Uint64(v) > newest {
				return fmt.Errorf("%s: format version %d is newer than this bookbot knows (%d): it was written by a newer bookbot", filepath.Base(path), binary.BigEndian.Uint64(v), newest)
			}
		}
		return fn(tx)
	})
}

// copyBucket copies every key of src into dst, and src's sequence. The
// bytes are copied too: dst holds them until it commits, after src's file
// is closed.
func copyBucket(src, dst *bbolt.Bucket) error {
	if err := dst.SetSequence(max(src.Sequence(), dst.Sequence())); err != nil {
		return err
	}
	return src.ForEach(func(k, v []byte) error {
		if v == nil {
			return errors.New("a nested bucket, which no bookbot wrote")
		}
		return dst.Put(bytes.Clone(k), bytes.Clone(v))
	})
}

// reindexJournal rewrites every imported entry, which drops what an older
// format kept and this one does not (the attendee's note and zone), and
// indexes it.
func reindexJournal(tx *bbolt.Tx) error {
	var all []journal.Entry
	err := tx.Bucket(journalEntries).ForEach(func(k, v []byte) error {
		e, err := decodeEntry(k, v)
		all = append(all, e)
		return err
	})
	if err != nil {
		return err
	}
	for i := range all {
		if err := putEntry(tx, &all[i]); err != nil {
			return err
		}
		if err := indexEntry(tx, &all[i]); err != nil {
			return err
		}
	}
	return nil
}

// importDigest copies the digest ledger's files in dir into tx, and
// returns how many. A claim file that is empty or unreadable (its process
// died between making and writing it) is a claim made when the file was
// last changed, as the ledger of files read it.
func importDigest(tx *bbolt.Tx, dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		if _, err := time.Parse(time.DateOnly, strings.TrimSuffix(key, ".failure")); err != nil {
			continue // not the ledger's: a post's temporary file starts with a dot
		}
		path := filepath.Join(dir, e.Name())
		raw, err := os.ReadFile(path)
		if err != nil {
			return n, err
		}
		var rec ledgerRecord
		if json.Unmarshal(raw, &rec) != nil || (rec.State != stateClaimed && rec.State != statePosted) {
			rec = ledgerRecord{State: stateClaimed}
		}
		if rec.State == stateClaimed && rec.ClaimedAt.IsZero() {
			fi, err := os.Stat(path)
			if err != nil {
				return n, err
			}
			rec.ClaimedAt = fi.ModTime().UTC()
		}
		if err := putRecord(tx, key, rec); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// rename moves the file at from to to, durably.
func rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(to))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
