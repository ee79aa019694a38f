// Package bolt is bookbot's embedded store: what `bookbot run` keeps
// across restarts on one machine, in one bbolt file under the state
// directory (BOOKBOT_STATE_DIR), bookbot.db. It holds the write journal
// (journal.Store), the outbox of every message posted exactly once
// (outbox.Store: the digest, notices, reminders, agendas), the notices'
// snapshot and threads, everyone's reminder and agenda settings and the
// offer cards posted in conversations (offer.Store) and people's own
// calendars, their keys sealed (account.Store), and the event type each
// upcoming booking was last listed with (booking.TypeStore), each in
// buckets of its own. The envelopes seen (Dedupe) are kept in the memory
// of the one process that serves Slack, not in the file.
// A backup of the embedded state is a copy of this one file.
//
// The file is opened for each transaction and closed again
// (internal/boltfile), so that `bookbot audit` and `bookbot digest` can use
// it beside the `bookbot run` that holds the directory.
//
// A state directory an earlier bookbot wrote (journal.db, notices.db,
// personal.db, digest/*.json) is imported into bookbot.db once, by the
// first Open that finds no bookbot.db (import.go).
package bolt

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/bookbot/bookbot/internal/boltfile"
	"github.com/bookbot/bookbot/statedir"
)

// FileName is the store's file under the state directory.
const FileName = "bookbot.db"

// version is the format of the files Open writes. A file of a newer one is
// refused: its format is unknown here. Version 2 keeps every claim in the
// outbox; Open carries a version 1 file's claims over (upgrade.go).
const version = 2

// The buckets, by the store that keeps them.
var (
	// journalEntries maps an entry's Seq (8 bytes, big-endian) to its JSON.
	journalEntries = []byte("journal.entries")
	// journalAttention indexes the entries that are open or not yet
	// reviewed, so finding them does not read the whole history.
	journalAttention = []byte("journal.attention")
	// journalCreates indexes creates by event, start and attendee email
	// (hashed, then the entry's key), so Begin finds earlier ones at once.
	journalCreates = []byte("journal.creates")
	// journalCancelled maps a booking ID to the cancel entry that
	// cancelled it.
	journalCancelled = []byte("journal.cancelled")

	// outboxBucket maps an outbox key ("digest/2026-11-24", …) to its
	// outboxRecord.
	outboxBucket = []byte("outbox")

	// noticesLast holds the saved snapshot, under lastKey.
	noticesLast = []byte("notices.last")
	// noticesThreads maps a booking ID to its noticeThread.
	noticesThreads = []byte("notices.threads")

	// personalSettings maps a Slack user ID to its wireSettings.
	personalSettings = []byte("personal.settings")

	// offersByID maps an offer's ID to its JSON (offer.Offer).
	offersByID = []byte("offers.byid")
	// offersByExpiry indexes offers by when they expire, then ID, so Prune
	// reads only the ones it deletes.
	offersByExpiry = []byte("offers.byexpiry")

	// accounts maps a Slack user ID to its wireAccount: the person's own
	// calendar, its key sealed (package account).
	accounts = []byte("accounts")
	// accountNotices maps a connected person's Slack user ID to the last
	// read of their calendar (notices.EncodeSnapshot), for their notices.
	accountNotices = []byte("accounts.notices")

	// bookingTypes holds a bucket of each calendar (its ID) that maps
	// a booking ID to the event type it was last listed with, and its
	// end (booking.TypeStore).
	bookingTypes = []byte("booking.types")

	buckets = [][]byte{
		journalEntries, journalAttention, journalCreates, journalCancelled,
		outboxBucket,
		noticesLast, noticesThreads,
		personalSettings,
		offersByID, offersByExpiry,
		accounts, accountNotices,
		bookingTypes,
	}
)

// Options are how Open opens the store.
type Options struct {
	// Beside opens the store without holding the state directory's lock,
	// beside the `bookbot run` that holds it (`bookbot digest`). The lock
	// is taken only while a missing file is made, so that no bookbot
	// writes the older files meanwhile.
	Beside bool
	// ReadOnly opens the store for reading only, beside whatever holds the
	// directory (`bookbot audit`): nothing is made or changed, and a
	// missing file reads as empty.
	ReadOnly bool
	// Log receives what the import of an earlier bookbot's files did
	// (nil: discarded).
	Log *slog.Logger
}

// DB is the store under a state directory. It is safe for concurrent use.
type DB struct {
	file     *boltfile.File
	lock     *statedir.Lock // nil beside the holder, and read-only
	owner    string
	readOnly bool
}

// Open opens the store under dir, for the process that serves from it:
// it takes the directory's lock (statedir.Acquire, whose *LockedError it
// returns as it is) and keeps it until Close. When the file is missing it
// is made, from the files of an earlier bookbot if there are any.
//
// Errors name the file.
func Open(dir string, opts Options) (*DB, error) {
	path := filepath.Join(dir, FileName)
	if opts.ReadOnly {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if old := olderFiles(dir); len(old) > 0 {
				return nil, fmt.Errorf("%s holds the state of an earlier bookbot (%s), which `bookbot run` imports into %s when it starts; start it first", dir, old[0], FileName)
			}
		}
		f, err := boltfile.OpenWith(path, "bookbot", version, boltfile.Options{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		return &DB{file: f, readOnly: true}, nil
	}

	db := &DB{}
	if _, err := os.Stat(path); !opts.Beside || err != nil {
		if db.lock, err = statedir.Acquire(dir); err != nil {
			return nil, err
		}
	}
	err := importOlder(dir, path, opts.Log)
	if err == nil {
		db.file, err = boltfile.OpenWith(path, "bookbot", version, boltfile.Options{Upgrade: upgrade}, buckets...)
	}
	if err != nil || opts.Beside {
		_ = db.Close()
	}
	if err != nil {
		return nil, err
	}
	if db.lock != nil {
		db.owner = db.lock.Owner
	}
	return db, nil
}

// Path is the store's file.
func (db *DB) Path() string { return db.file.Path() }

// Owner names the process that holds the state directory, as its lock
// file does; "" beside it.
func (db *DB) Owner() string { return db.owner }

// Close gives the state directory up. The file needs no closing: it is
// closed after each transaction.
func (db *DB) Close() error {
	if db.lock == nil {
		return nil
	}
	err := db.lock.Release()
	db.lock = nil
	return err
}
