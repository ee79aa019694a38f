//go:build ignore

// gen writes the state directory of the release before store/bolt, with
// that release's own code (journal.Open, notices.OpenBolt,
// personal.OpenBolt, digest.OpenLedger), for the import test. It was run
// once, at the commit that added it:
//
//	go run ./store/bolt/testdata/release/gen.go store/bolt/testdata/release/state
//
// The code it calls is gone since, so it no longer builds; it stays to
// say exactly how the files were made. import_test.go expects what it
// wrote.
package main

import (
	"context"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: gen DIR")
	}
	dir := os.Args[1]
	if err := os.RemoveAll(dir); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	must := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}

	// The journal: an entry of each kind.
	jr, err := journal.Open(dir, journal.Options{})
	must(err)
	jr.Now, jr.Owner = clock, "pid 7 on old-host, since 2026-11-23T08:00:00Z"
	create := func(day int) booking.Write {
		start := time.Date(2026, 11, 24+day, 9, 30, 0, 0, time.UTC)
		return booking.Write{Op: booking.OpCreate, Actor: "U1", EventType: "intro-call",
			Start: start.Format(time.RFC3339), End: start.Add(15 * time.Minute).Format(time.RFC3339),
			Name: "Grace Hopper", Email: "grace@example.com"}
	}
	begin := func(w booking.Write) func(*booking.Result) error {
		now = now.Add(time.Minute)
		finish, err := jr.Begin(ctx, w)
		must(err)
		now = now.Add(time.Second)
		return finish
	}
	// 1: confirmed, verified by the list.
	must(begin(create(0))(&booking.Result{Outcome: booking.Confirmed, Verified: true,
		Booking: &booking.Booking{ID: "bk_1"}, Seen: []string{"201 Created", "listed"}}))
	// 2: a cancel of it, cancelled.
	must(begin(booking.Write{Op: booking.OpCancel, Actor: "U2", EventType: "intro-call", Start: create(0).Start, Name: "Grace Hopper", BookingID: "bk_1"})(
		&booking.Result{Outcome: booking.Cancelled, Verified: true}))
	// 3: unclear, reported and reviewed.
	must(begin(create(1))(&booking.Result{Outcome: booking.Unknown, Seen: []string{"timeout"}}))
	must(jr.MarkReported(3, "C0REVIEW"))
	now = now.Add(time.Hour)
	_, err = jr.MarkReviewed(3, "U9")
	must(err)
	// 4: not booked, a 409 of a taken time.
	must(begin(create(2))(&booking.Result{Outcome: booking.NotBooked,
		Err: &booking.APIError{Endpoint: "POST /bookings", StatusCode: http.StatusConflict, BodyStatus: http.StatusConflict}}))
	// 5: held back by bookbot's own guard.
	must(begin(create(3))(&booking.Result{Outcome: booking.RateLimited, Held: true, RetryAfter: 30 * time.Second}))
	// 6: a dry run.
	w := create(4)
	w.DryRun = true
	must(begin(w)(&booking.Result{Outcome: booking.DryRun}))
	// 7: settled after a restart, awaiting review and unreported.
	begin(create(5))
	_, err = jr.Finish(7, &booking.Result{Outcome: booking.ProbablyNotBooked, Receipt: &booking.Receipt{ID: "bk_7"}}, true)
	must(err)
	// 8: in flight when the process died.
	begin(create(6))

	// Notices: a snapshot, a thread with a reply, a claim never settled.
	ns, err := notices.OpenBolt(filepath.Join(dir, notices.BoltFileName))
	must(err)
	start := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	must(ns.SaveLast(ctx, notices.Snapshot{At: now, ServiceAt: now.Add(4 * time.Minute), Bookings: []booking.Booking{
		{ID: "bk_1", Start: start, End: start.Add(15 * time.Minute), Status: "accepted",
			BookerName: booking.Some("Grace Hopper"), BookerEmail: booking.Some("grace@example.com"), EventType: booking.Some("intro-call")},
		{ID: "bk_9", Start: start.Add(time.Hour), End: start.Add(75 * time.Minute), Status: "pending"},
	}}))
	since := now.Add(-time.Hour)
	k1 := notices.Key{BookingID: "bk_1", Kind: notices.New, Start: start, End: start.Add(15 * time.Minute), Since: since}
	k2 := notices.Key{BookingID: "bk_1", Kind: notices.Moved, Start: start.Add(2 * time.Hour), End: start.Add(135 * time.Minute), Since: now}
	k3 := notices.Key{BookingID: "bk_9", Kind: notices.Cancelled, Start: start.Add(time.Hour), End: start.Add(75 * time.Minute), Since: now}
	for _, k := range []notices.Key{k1, k2, k3} {
		ok, err := ns.Claim(ctx, k, now)
		must(err)
		if !ok {
			log.Fatalf("%s claimed twice", k)
		}
	}
	must(ns.Posted(ctx, k1, notices.Message{Channel: "C0NOTICE", TS: "1763976600.000100"}, true))
	must(ns.Posted(ctx, k2, notices.Message{Channel: "C0NOTICE", TS: "1763976700.000200"}, false))

	// Reminder and agenda settings, and what was sent.
	ps, err := personal.OpenBolt(filepath.Join(dir, personal.BoltFileName))
	must(err)
	must(ps.SaveSettings(ctx, "U1", personal.Settings{Remind: 15 * time.Minute, Agenda: &personal.Agenda{Minute: 8*60 + 30, Weekdays: true}, Updated: now}))
	must(ps.SaveSettings(ctx, "U2", personal.Settings{Updated: now}))
	for _, k := range []string{personal.ReminderKey("U1", "bk_1", start), personal.AgendaKey("U1", personal.Date{Year: 2026, Month: 11, Day: 24})} {
		ok, err := ps.Claim(ctx, k, now)
		must(err)
		if !ok {
			log.Fatalf("%q claimed twice", k)
		}
	}

	// The digest ledger: a date posted, a date claimed by a process that
	// died, a failure notice posted.
	ledger, err := digest.OpenLedger(dir)
	must(err)
	ledger.Now = clock
	berlin, err := time.LoadLocation("Europe/Berlin")
	must(err)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, berlin) }
	for _, d := range []int{24, 25} {
		ok, err := ledger.Claim(ctx, day(d))
		must(err)
		if !ok {
			log.Fatalf("%d claimed twice", d)
		}
	}
	must(ledger.Posted(ctx, day(24), digest.PostInfo{At: now, Channel: "C0DIGEST", TS: "1763900000.000100", Entries: 3}))
	ok, err := ledger.ClaimNotice(ctx, day(26))
	must(err)
	if !ok {
		log.Fatal("notice claimed twice")
	}
	must(ledger.NoticePosted(ctx, day(26), digest.PostInfo{At: now, Channel: "C0DIGEST", Uncertain: true}))
}
