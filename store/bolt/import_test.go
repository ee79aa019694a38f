package bolt_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/statedir"
	"github.com/bookbot/bookbot/store/bolt"
)

// release copies the state directory the release before this store wrote
// (testdata/release/gen.go) to a directory of the test's own.
func release(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.CopyFS(dir, os.DirFS("testdata/release/state")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot is every file under dir and its bytes, but for the lock file.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == statedir.LockName {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// rawEntries reads the journal entries of an older journal.db as they are.
func rawEntries(t *testing.T, path string) []journal.Entry {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var all []journal.Entry
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("entries")).ForEach(func(_, v []byte) error {
			var e journal.Entry
			err := json.Unmarshal(v, &e)
			all = append(all, e)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// A state directory of the current release is imported at the first
// start: every entry, record and setting reads back the same through the
// new store, and works as it did; the older files are left as they were,
// and the log says what was imported and that they can go.
func TestImportsTheCurrentRelease(t *testing.T) {
	t.Parallel()
	dir := release(t)
	// A process died between making a claim file and writing it, and a
	// post's temporary file was left.
	died := filepath.Join(dir, "digest", "2026-11-27.json")
	if err := os.WriteFile(died, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	longAgo := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(died, longAgo, longAgo); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "digest", ".2026-11-28.123.tmp"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	want := rawEntries(t, filepath.Join(dir, "journal.db"))

	var logs bytes.Buffer
	db, err := bolt.Open(dir, bolt.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{"level=INFO", "imported into one file", "can be removed",
		"from=\"journal.db, notices.db, personal.db, digest/*.json\"", "journal_entries=8", "notices_snapshot=1",
		"notices_claims=3", "notices_threads=1", "personal_settings=2", "personal_claims=2", "digest_records=4"} {
		if !strings.Contains(logs.String(), s) {
			t.Errorf("no %q in the log:\n%s", s, logs.String())
		}
	}
	after := snapshot(t, dir)
	for path, b := range before {
		if after[path] != b {
			t.Errorf("%s changed", path)
		}
	}
	if _, err := os.Stat(db.Path() + ".import"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the import left its file: %v", err)
	}
	ctx := t.Context()
	now := time.Date(2026, 11, 23, 10, 9, 0, 0, time.UTC)

	// The journal: every entry as it was, the indexes rebuilt.
	j := db.Journal()
	j.Now = func() time.Time { return now }
	got, err := j.Since(time.Time{})
	if err != nil || len(want) != 8 || !reflect.DeepEqual(got, want) {
		t.Fatalf("journal entries: %v\n got %+v\nwant %+v", err, got, want)
	}
	kinds := map[booking.Outcome]bool{}
	for _, e := range got {
		kinds[e.Outcome] = true
	}
	for _, o := range []booking.Outcome{"", booking.Confirmed, booking.Cancelled, booking.Unknown, booking.NotBooked, booking.RateLimited, booking.DryRun, booking.ProbablyNotBooked} {
		if !kinds[o] {
			t.Errorf("the release's journal has no %q entry", o)
		}
	}
	if n, err := j.AwaitingReview(); n != 1 || err != nil {
		t.Errorf("awaiting review = %d, %v; want 1 (the recovered entry)", n, err)
	}
	if list, err := j.Unreported(); err != nil || len(list) != 1 || list[0].Seq != 7 {
		t.Errorf("unreported = %+v, %v; want entry 7", list, err)
	}
	var dup *booking.DuplicateError
	if _, err := j.Begin(ctx, want[7].Write); !errors.As(err, &dup) || dup.Prior.Seq != 8 {
		t.Errorf("a repeat of the create in flight: %v; want a duplicate of entry 8", err)
	}
	if _, err := j.Begin(ctx, want[0].Write); err != nil {
		t.Errorf("a repeat of the create cancelled since: %v", err)
	}
	settled, err := j.Recover(ctx, func(context.Context, booking.Write) *booking.Result {
		return &booking.Result{Outcome: booking.NotBooked, Verified: true}
	})
	if err != nil || len(settled) != 1 || settled[0].Seq != 8 {
		t.Errorf("recovered %+v, %v; want entry 8, which the earlier process began", settled, err)
	}
	if got, _ := j.Since(time.Time{}); got[len(got)-1].Seq != 9 {
		t.Errorf("the sequence did not carry over: %+v", got[len(got)-1])
	}

	status := wantReleaseState(t, db, now)
	if st := status(27); st.State != digest.StateClaimed || !st.Stale || !st.ClaimedAt.Equal(longAgo) {
		t.Errorf("27th = %+v; want a stale claim of %v", st, longAgo)
	}

	// Once imported, never again.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	again, err := bolt.Open(dir, bolt.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if logs.Len() != 0 {
		t.Errorf("imported again:\n%s", logs.String())
	}
	if list, _ := again.Journal().Since(time.Time{}); len(list) != 9 {
		t.Errorf("after reopening: %d entries, want 9", len(list))
	}
}

// wantReleaseState checks what the release fixture's notices, settings
// and digest ledger hold, in db, as a process at now sees it; it returns
// the digest's status of a date of November, for more checks.
func wantReleaseState(t *testing.T, db *bolt.DB, now time.Time) (status func(d int) digest.Status) {
	t.Helper()
	ctx := t.Context()
	// Notices: the snapshot, the thread, the claims settled and not.
	ns := db.Notices()
	last, ok, err := ns.Last(ctx)
	if err != nil || !ok || len(last.Bookings) != 2 || last.Bookings[0].BookerEmail != booking.Some("grace@example.com") ||
		last.Bookings[1].EventType.Valid || !last.ServiceAt.Equal(last.At.Add(4*time.Minute)) {
		t.Errorf("snapshot = %+v, %v, %v", last, ok, err)
	}
	if m, ok, err := ns.Thread(ctx, "bk_1"); err != nil || !ok || m != (notices.Message{Channel: "C0NOTICE", TS: "1763976600.000100"}) {
		t.Errorf("thread of bk_1 = %+v, %v, %v", m, ok, err)
	}
	if _, ok, err := ns.Thread(ctx, "bk_9"); err != nil || ok {
		t.Errorf("bk_9 has a thread: %v, %v", ok, err)
	}
	start := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	snapAt := time.Date(2026, 11, 23, 10, 8, 8, 0, time.UTC)
	posted := notices.Key{BookingID: "bk_1", Kind: notices.New, Start: start, End: start.Add(15 * time.Minute), Since: snapAt.Add(-time.Hour)}
	unsettled := notices.Key{BookingID: "bk_9", Kind: notices.Cancelled, Start: start.Add(time.Hour), End: start.Add(75 * time.Minute), Since: snapAt}
	if ok, err := ns.Claim(ctx, posted, now); err != nil || ok {
		t.Errorf("the posted notice was claimed again: %v, %v", ok, err)
	}
	if at, ok, err := ns.Unsettled(ctx, unsettled); err != nil || !ok || !at.Equal(snapAt) {
		t.Errorf("unsettled claim = %v, %v, %v; want one made at %v", at, ok, err, snapAt)
	}
	if err := ns.Release(ctx, posted); err == nil {
		t.Error("the posted notice's claim was released")
	}

	// Settings and what was sent.
	ps := db.Personal()
	all, err := ps.AllSettings(ctx)
	u1 := all["U1"]
	if err != nil || len(all) != 2 || u1.Remind != 15*time.Minute || u1.Agenda == nil ||
		*u1.Agenda != (personal.Agenda{Minute: 8*60 + 30, Weekdays: true}) || !u1.Updated.Equal(snapAt) || !all["U2"].Off() {
		t.Errorf("settings = %+v, %v", all, err)
	}
	for _, k := range []string{personal.ReminderKey("U1", "bk_1", start), personal.AgendaKey("U1", personal.Date{Year: 2026, Month: 11, Day: 24})} {
		if ok, err := ps.Claim(ctx, k, now); err != nil || ok {
			t.Errorf("%q was claimed again: %v, %v", k, ok, err)
		}
	}

	// The digest ledger: posted, claimed, a failure notice.
	l := digest.NewLedger(db.Outbox(), digest.LedgerOptions{Now: func() time.Time { return now }})
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, berlin) }
	status = func(d int) digest.Status {
		st, err := l.Status(ctx, digest.Key(day(d)))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	wantInfo := digest.PostInfo{At: snapAt, Channel: "C0DIGEST", TS: "1763900000.000100", Entries: 3}
	if st := status(24); st.State != digest.StatePosted || !st.ClaimedAt.Equal(snapAt) || !st.Info.At.Equal(wantInfo.At) || st.Info.TS != wantInfo.TS || st.Info.Entries != 3 {
		t.Errorf("24th = %+v; want posted, %+v", st, wantInfo)
	}
	if st := status(25); st.State != digest.StateClaimed || st.Stale || !st.ClaimedAt.Equal(snapAt) {
		t.Errorf("25th = %+v; want claimed at %v", st, snapAt)
	}
	if st := status(26); st.State != digest.StateNone {
		t.Errorf("26th = %+v; want only its failure notice recorded", st)
	}
	if ok, err := l.Claim(ctx, digest.FailureKey(day(26))); err != nil || ok {
		t.Errorf("the 26th's failure notice was claimed again: %v, %v", ok, err)
	}
	if err := l.Release(ctx, digest.FailureKey(day(26))); err == nil {
		t.Error("the 26th's posted failure notice was released")
	}
	return status
}

// A bookbot.db of format 1, before the outbox, has its claims carried over
// into the outbox when it is opened, nothing lost, and its buckets of
// claims removed; the format becomes 2. The file was written by the code
// of format 1 (testdata/v1/gen.go).
func TestCarriesFormat1Over(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/v1/bookbot.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bolt.FileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	status := wantReleaseState(t, db, time.Date(2026, 11, 23, 10, 9, 0, 0, time.UTC))
	// The failure notice a process claimed, and never settled.
	now := time.Date(2026, 11, 26, 16, 5, 0, 0, time.UTC)
	failure := time.Date(2026, 11, 27, 0, 0, 0, 0, berlin)
	l := digest.NewLedger(db.Outbox(), digest.LedgerOptions{Now: func() time.Time { return now }})
	if st, err := l.Status(t.Context(), digest.FailureKey(failure)); err != nil || st.State != digest.StateClaimed ||
		!st.ClaimedAt.Equal(now.Add(-5*time.Minute)) || st.Stale {
		t.Errorf("27th's failure notice = %+v, %v; want claimed at 16:00", st, err)
	}
	if st := status(27); st.State != digest.StateNone {
		t.Errorf("27th = %+v; want none", st)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// The file is of format 2, its claims in the outbox only.
	update(t, filepath.Join(dir, bolt.FileName), func(tx *bbolt.Tx) error {
		if v := tx.Bucket([]byte("meta")).Get([]byte("version")); binary.BigEndian.Uint64(v) != 2 {
			t.Errorf("format %x, want 2", v)
		}
		for _, name := range []string{"digest.ledger", "notices.claims", "personal.claims"} {
			if tx.Bucket([]byte(name)) != nil {
				t.Errorf("bucket %s is still there", name)
			}
		}
		if n := tx.Bucket([]byte("outbox")).Stats().KeyN; n != 9 {
			t.Errorf("the outbox holds %d keys, want 9: 4 of the digest, 3 notices, 2 of personal", n)
		}
		return nil
	})

	// Opened again, nothing changes.
	again, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	wantReleaseState(t, again, time.Date(2026, 11, 23, 10, 9, 0, 0, time.UTC))
}

// A journal written before notes were dropped loses them in the import,
// bytes included, and its creates are indexed.
func TestImportsAnOlderJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v1 := `{"seq":1,"at":"2026-11-23T09:00:00Z","op":"create","actor":"U1","event_type":"intro-call",` +
		`"start":"2026-11-24T09:30:00Z","end":"2026-11-24T09:45:00Z","name":"Grace Hopper","email":"grace@example.com",` +
		`"booker_tz":"Europe/Berlin","note":"a very private note","outcome":"confirmed","created":"bk_1","verified":true}`
	update(t, filepath.Join(dir, "journal.db"), func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("entries"))
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucket([]byte("attention")); err != nil {
			return err
		}
		if _, err := b.NextSequence(); err != nil {
			return err
		}
		return b.Put(binary.BigEndian.AppendUint64(nil, 1), []byte(v1))
	})

	j, _ := open(t, dir)
	raw, err := os.ReadFile(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a very private note", "Europe/Berlin"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the file holds %q", s)
		}
	}
	list, err := j.Since(time.Time{})
	if err != nil || len(list) != 1 || list[0].Email != "grace@example.com" || list[0].Created != "bk_1" {
		t.Fatalf("entries: %+v, %v", list, err)
	}
	var dup *booking.DuplicateError
	if _, err := j.Begin(t.Context(), create); !errors.As(err, &dup) {
		t.Errorf("the older journal's booking does not stand in the way of a duplicate: %v", err)
	}
	finish, err := j.Begin(t.Context(), createAt(1))
	if err != nil {
		t.Fatal(err)
	}
	finish(&booking.Result{Outcome: booking.Confirmed})
	if list, _ := j.Since(time.Time{}); len(list) != 2 || list[1].Seq != 2 {
		t.Errorf("the sequence did not carry over: %+v", list)
	}
}

// An import that fails leaves no file behind, nor half of one: the next
// start imports afresh. The older files are not touched.
func TestFailedImportLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := release(t)
	// A notices.db of a newer bookbot than this one.
	update(t, filepath.Join(dir, "notices.db"), func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("version"), binary.BigEndian.AppendUint64(nil, 2))
	})
	before := snapshot(t, dir)
	_, err := bolt.Open(dir, bolt.Options{})
	if err == nil || !strings.Contains(err.Error(), "notices.db: format version 2 is newer than this bookbot knows (1)") {
		t.Fatalf("Open: %v, want the newer notices.db refused", err)
	}
	after := snapshot(t, dir)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the failed import changed the directory: %d files before, %d after", len(before), len(after))
	}

	// A crash mid-import left its file; the next start starts over.
	if err := os.Remove(filepath.Join(dir, "notices.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bolt.FileName+".import"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if list, err := db.Journal().Since(time.Time{}); err != nil || len(list) != 8 {
		t.Errorf("journal after the second start: %d entries, %v", len(list), err)
	}
}

// A reader that finds only the files of an earlier bookbot says to start
// `bookbot run`, which imports them, rather than read nothing.
func TestReadOnlyBeforeTheImport(t *testing.T) {
	t.Parallel()
	dir := release(t)
	if _, err := bolt.Open(dir, bolt.Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "`bookbot run` imports into bookbot.db when it starts; start it first") {
		t.Errorf("Open read-only: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, bolt.FileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a reader made the file: %v", err)
	}
}
