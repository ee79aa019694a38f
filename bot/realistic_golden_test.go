package bot

import (
	"fmt"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

// goldenPeople are ordinary names, as most calendars have them.
var goldenPeople = []string{
	"Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Margaret Hamilton",
	"Radia Perlman", "Barbara Liskov", "Edsger Dijkstra", "Hedy Lamarr", "Frances Allen",
	"Donald Knuth", "Mary Jackson", "Emmy Noether", "Dorothy Vaughan", "Claude Shannon",
	"Annie Easley", "Ken Thompson", "Karen Spärck Jones", "Tim Berners-Lee", "Sophie Wilson",
}

// goldenUUID is the i-th booking ID as the booking service gives them.
func goldenUUID(i int) string {
	return fmt.Sprintf("%08x-5697-4400-90ba-%012x", 0xa2972a0c+i*7919, 0xc80b6a7d56fc+i*48271)
}

// goldenDay is n bookings of ordinary people, UUIDs for IDs, from day's
// hour on, every minutes, of the first two event types in turn.
func goldenDay(n, day, hour, minutes int) []booking.Booking {
	var out []booking.Booking
	for i := range n {
		start := goldenAt(day, hour, 0).Add(time.Duration(i*minutes) * time.Minute)
		name := goldenPeople[i%len(goldenPeople)]
		slug := []string{"consultation", "intro-call"}[i%2]
		email := fmt.Sprintf("%s.%d@example.com", []string{"ada", "grace", "alan", "kate"}[i%4], i)
		out = append(out, goldenBooking(goldenUUID(i), start, 30, &slug, &name, testutil.Ptr(email)))
	}
	return out
}

// goldenRealisticCases are what people see on an ordinary calendar: real
// names, UUIDs for IDs, 40 and 100 bookings, and an attendee in the
// person's own zone, as the booking form has it by default.
func goldenRealisticCases() []goldenCase {
	types, berlin, now := goldenTypes, goldenBerlin, goldenNow
	var cases []goldenCase
	add := func(name string, rows rowRule, docs func(t *testing.T) []goldenDoc) {
		cases = append(cases, goldenCase{name, rows, docs})
	}
	fixed := func(name string, rows rowRule, m message) {
		add(name, rows, func(*testing.T) []goldenDoc { return msgDoc(m) })
	}
	// 40 bookings over four days, ten a day, from today.
	var week []booking.Booking
	for d := range 4 {
		for _, b := range goldenDay(10, 23+d, 10, 30) {
			b.ID = goldenUUID(d*10 + len(week)%10)
			week = append(week, b)
		}
	}
	today40, tomorrow40, tomorrow100 := goldenDay(40, 23, 10, 10), goldenDay(40, 24, 8, 10), goldenDay(100, 24, 8, 5)
	fixed("realistic_list_40", rowsOne, listMessage(week, types, berlin, 0, now, listMark{}))
	fixed("realistic_today_40", rowsDated, todayMessage(today40, types, berlin, now))
	fixed("realistic_agenda_40", rowsDated, agendaMessage(personal.Due{Kind: personal.AgendaKind, User: "U012ADA", Day: personal.Date{Year: 2026, Month: time.March, Day: 23}, At: goldenAt(23, 8, 0), Bookings: today40}, types, berlin))
	for _, c := range []struct {
		name string
		list []booking.Booking
	}{{"realistic_digest_40", tomorrow40}, {"realistic_digest_100", tomorrow100}} {
		add(c.name, rowsDated, func(*testing.T) []goldenDoc {
			var docs []goldenDoc
			for _, m := range DigestMessages(digest.Build(c.list, types, digest.Tomorrow(now, berlin), berlin), true) {
				docs = append(docs, goldenDoc{kind: "message", text: m.Text, blocks: m.Blocks})
			}
			return docs
		})
	}
	home := func(name string, list []booking.Booking) {
		add(name, rowsDated, func(*testing.T) []goldenDoc {
			return []goldenDoc{{kind: "home", blocks: homeBlocks(list, nil, types, berlin, now, &desk{settings: personal.Settings{Remind: 15 * time.Minute}, known: true})}}
		})
	}
	home("realistic_home_40", week)
	home("realistic_home_100", append(goldenDay(40, 23, 10, 10), goldenDay(60, 24, 8, 5)...))

	// Booked for an attendee in the person's own zone, and in another's.
	meta := modalMeta{Zone: "Europe/Berlin", Event: "consultation", Start: "2026-03-24T08:00:00Z", Name: "Grace Hopper", Email: "grace@example.com", TZ: "Europe/Berlin"}
	created := goldenBooking(goldenUUID(1), time.Date(2026, 3, 24, 8, 0, 0, 0, time.UTC), 30, testutil.Ptr("consultation"), testutil.Ptr("Grace Hopper"), testutil.Ptr("grace@example.com"))
	confirmed := &booking.Result{Outcome: booking.Confirmed, Booking: &created, Verified: true}
	fixed("realistic_create_same_zone", rowsFree, createOutcome(meta, confirmed, nil, berlin, now, types, goldenPage, true))
	elsewhere := meta
	elsewhere.TZ = "America/Los_Angeles"
	fixed("realistic_create_other_zone", rowsFree, createOutcome(elsewhere, confirmed, nil, berlin, now, types, goldenPage, true))
	fixed("realistic_cancelled", rowsFree, cancelOutcomeMessage(created.ID, "U012ADA", &booking.Result{Outcome: booking.Cancelled, Verified: true, Booking: &created}, types, berlin, now))
	fixed("realistic_cancelling", rowsFree, cancellingMessage(&created, types, berlin, now))

	// What the channel and the person are sent.
	by := &notices.By{Actor: "U012ADA", At: now.Add(-time.Minute)}
	fixed("realistic_notice_new", rowsFree, noticeMessage(notices.Notice{Change: notices.Change{Kind: notices.New, Booking: created}, Title: "Consultation", By: by}, berlin, false, now))
	fixed("realistic_reminder", rowsFree, reminderMessage(personal.Due{Kind: personal.Reminder, User: "U012ADA", Key: "k", At: created.Start.Add(-15 * time.Minute), Booking: created}, types, berlin, created.Start.Add(-15*time.Minute)))
	add("realistic_burst_20", rowsFree, func(*testing.T) []goldenDoc {
		var ns []notices.Notice
		for i, b := range goldenDay(20, 23, 11, 30) {
			ns = append(ns, notices.Notice{Change: notices.Change{Kind: []notices.Kind{notices.New, notices.Cancelled}[i%3/2], Booking: b}, Title: titleOf(b.EventType, types), Since: now.Add(-time.Minute)})
		}
		return burstDocs(burstMessages(ns, berlin, false, now))
	})

	// A cancellation's review names the booking; its ID is quiet, last.
	cancel := journal.Entry{Seq: 21, At: now.Add(-5 * time.Minute).UTC(), Outcome: booking.Unknown, NeedsReview: true,
		Write: booking.Write{Op: booking.OpCancel, Actor: "U012ADA", BookingID: created.ID, EventType: "consultation", Start: "2026-03-24T08:00:00Z", Name: "Grace Hopper"}}
	fixed("review_cancel_named", rowsFree, reviewMessage(cancel, types, berlin))
	return cases
}
