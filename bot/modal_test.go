package bot_test

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
)

// The booking modal from open to outcome.
func TestBookingModalFullFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ack := h.slash(ada, "new intro-call")
	if len(ack.Payload) != 0 {
		t.Errorf("/booking new acked with %s", ack.Payload)
	}
	open, err := h.sl.WaitCall(h.ctx(), "views.open")
	if err != nil || open.Error != "" {
		t.Fatalf("views.open: %v %q", err, open.Error)
	}
	v := h.waitView("with slots", func(v slacktest.View) bool {
		return v.TriggerUser == ada && len(elements(v.Blocks, "slot")) == 1
	})
	if v.CallbackID != "booking_create" || v.ID != h.sl.Views()[0].ID {
		t.Errorf("modal callback_id %q", v.CallbackID)
	}
	ev := elements(v.Blocks, "event_type")
	if len(ev) != 1 {
		t.Fatalf("event_type selects: %d", len(ev))
	}
	var slugs []string
	for _, o := range options(ev[0]) {
		slugs = append(slugs, o.value)
	}
	if !slices.Equal(slugs, []string{"consultation", "deep-dive", "intro-call", "office-hours"}) { // by slug, as the API lists them
		t.Errorf("event types offered %v, want the solo ones", slugs)
	}
	if init, _ := ev[0]["initial_option"].(map[string]any); str(init, "value") != "intro-call" {
		t.Errorf("event type not preselected: %v", init)
	}
	if len(elements(v.Blocks, "slot_day")) != 1 {
		t.Error("no day select")
	}
	slotOpts := options(elements(v.Blocks, "slot")[0])
	if len(slotOpts) == 0 || slotOpts[0] != (option{firstSlot, "11:15–11:30"}) {
		t.Errorf("slot options start %v", slotOpts[:min(1, len(slotOpts))])
	}

	// The attendee's zone is searched for, as a person types.
	sug, err := h.sl.Suggest(h.ctx(), ada, v.ID, "booker_tz", "new york")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sug.Payload), `"value":"America/New_York"`) {
		t.Errorf("suggestions for \"new york\": %s", sug.Payload)
	}

	in := bookingInputs(firstSlot, "grace@example.com")
	in["name"] = "Grace <!here> Hopper"
	sa := parseSubmissionAck(t, h.submit(ada, v.ID, in))
	if sa.ResponseAction != "update" || !strings.Contains(textOf(sa.View), "Booking *Intro call*") {
		t.Errorf("submission ack: %s %s", sa.ResponseAction, textOf(sa.View))
	}
	// Replicas keep this ack in their database, and the note and the
	// attendee's zone are never written down.
	if strings.Contains(string(sa.View), "compilers") || strings.Contains(string(sa.View), "New_York") {
		t.Errorf("the submission's ack carries the note or the attendee's zone: %s", sa.View)
	}

	done := h.waitView("Booked", func(x slacktest.View) bool {
		return x.ID == v.ID && strings.Contains(textOf(x.Blocks), "Booked")
	})
	var made []bookingtest.Booking
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == in["email"] {
			made = append(made, b)
		}
	}
	if len(made) != 1 {
		t.Fatalf("%d bookings made, want 1", len(made))
	}
	bk := made[0]
	text := textOf(done.Blocks)
	if strings.Contains(text, bk.ID) {
		t.Errorf("the outcome shows the booking's ID:\n%s", text)
	}
	for _, s := range []string{"*Your time:* today, 11:15–11:30 CET", "*Attendee's time:* 06:15–06:30 EDT, in America/New_York", "Grace &lt;!here&gt; Hopper (grace@example.com)"} {
		if !strings.Contains(text, s) {
			t.Errorf("outcome lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "<!here>") {
		t.Error("the attendee's name is not escaped: it would ping the channel")
	}
	dm := h.dm(ada, "Booked")
	if strings.Contains(textOf(dm.Blocks)+dm.Text, bk.ID) {
		t.Errorf("the DM shows the booking's ID: %s", textOf(dm.Blocks))
	}
	// The message the person keeps says what can come next; the modal,
	// about to close, does not.
	if values(elements(dm.Blocks, "cancel_booking"))[0] != bk.ID || len(elements(dm.Blocks, "show_list")) != 1 || len(elements(dm.Blocks, "new_booking")) != 1 {
		t.Errorf("the DM lacks the next actions:\n%s", dm.Blocks)
	}
	if len(elements(done.Blocks, "show_list")) != 0 {
		t.Errorf("the modal shows the next actions")
	}
	h.interact(slacktest.BlockAction(ada, "show_list", "", slacktest.InMessage(dm)))
	h.reply(ada, "Grace &lt;!here&gt; Hopper")

	h.drain()
	posts := h.requests(bookingtest.EndpointCreateBooking)
	if len(posts) != 1 {
		t.Fatalf("%d POST /bookings, want 1", len(posts))
	}
	wantForm := url.Values{
		"event_type": {"intro-call"}, "start": {firstSlot}, "end": {"2026-03-23T10:30:00Z"},
		"name": {"Grace <!here> Hopper"}, "email": {"grace@example.com"}, "booker_tz": {"America/New_York"},
		"q:booking-note": {in["note"]},
	}
	if got := posts[0].Form; got.Encode() != wantForm.Encode() {
		t.Errorf("POST /bookings form\n got %v\nwant %v", got, wantForm)
	}
	if bk.BookerTZ != "America/New_York" || bk.Note != in["note"] || !bk.Start.Equal(time.Date(2026, 3, 23, 10, 15, 0, 0, time.UTC)) {
		t.Errorf("stored booking %+v", bk)
	}
}

// Field problems are shown next to the fields, and nothing is sent.
func TestBookingModalFieldErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	note := strings.Repeat("😀", 1001) // 1001 characters, 2002 UTF-16 units
	sa := parseSubmissionAck(t, h.submit(ada, v.ID, map[string]string{
		"slot": firstSlot, "name": "   ", "email": "ada@example", "booker_tz": "Europe/Berlin", "note": note,
	}))
	if sa.ResponseAction != "errors" {
		t.Fatalf("response_action %q, want errors", sa.ResponseAction)
	}
	for _, k := range []string{"name", "email", "note"} {
		if sa.Errors[k] == "" {
			t.Errorf("no error for %s: %v", k, sa.Errors)
		}
	}
	if !strings.Contains(sa.Errors["note"], "2002") {
		t.Errorf("note error %q does not count UTF-16 units", sa.Errors["note"])
	}
	if len(sa.Errors) != 3 {
		t.Errorf("errors %v", sa.Errors)
	}
	cur, _ := h.sl.View(v.ID)
	if cur.Closed || len(cur.Errors) != 3 {
		t.Errorf("view after errors: closed=%v errors=%v", cur.Closed, cur.Errors)
	}
	// 1000 emoji are exactly the 2000 units allowed.
	sa = parseSubmissionAck(t, h.submit(ada, v.ID, map[string]string{
		"slot": firstSlot, "name": " ", "email": "ada@example.com", "booker_tz": "Europe/Berlin", "note": strings.Repeat("😀", 1000),
	}))
	if _, bad := sa.Errors["note"]; bad || sa.Errors["name"] == "" || len(sa.Errors) != 1 {
		t.Errorf("2000-unit note: %v", sa.Errors)
	}
	// A time zone typed rather than picked from the list.
	sa = parseSubmissionAck(t, h.submit(ada, v.ID, map[string]string{
		"slot": firstSlot, "name": "Ada", "email": "ada@example.com", "booker_tz": "Mars/Olympus_Mons",
	}))
	if sa.ResponseAction != "errors" || sa.Errors["booker_tz"] == "" {
		t.Errorf("bad zone: %+v", sa)
	}
	// Invalid input sends nothing.
	h.wantPosts(0)
}

// A redelivered submission and two windows booking the same slot for
// the same attendee make one POST.
func TestBookingIsMadeOnce(t *testing.T) {
	t.Parallel()
	t.Run("redelivered", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		ack := h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		again, err := h.sl.Redeliver(h.ctx(), ack.EnvelopeID)
		if err != nil {
			t.Fatal(err)
		}
		if string(again.Payload) != string(ack.Payload) {
			t.Errorf("redelivery acked differently:\n%s\n%s", again.Payload, ack.Payload)
		}
		h.dm(ada, "Booked")
		h.wantPosts(1)
		dms := 0
		for _, m := range h.sl.Messages() {
			if m.Kind == "message" && m.Channel == ada {
				dms++
			}
		}
		if dms != 1 {
			t.Errorf("%d outcome DMs, want 1", dms)
		}
	})
	t.Run("two windows", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		va := h.openModal(ada, "intro-call")
		vb := h.openModal(bob, "intro-call")
		h.sb.SetLatency(bookingtest.EndpointCreateBooking, 500*time.Millisecond)
		acks := make([]slacktest.Ack, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, x := range []struct {
			user string
			v    slacktest.View
		}{{ada, va}, {bob, vb}} {
			wg.Go(func() {
				acks[i], errs[i] = h.sl.SubmitInputs(h.ctx(), x.user, x.v.ID, bookingInputs(firstSlot, "grace@example.com"))
			})
		}
		wg.Wait()
		var actions []string
		for i := range acks {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			sa := parseSubmissionAck(t, acks[i])
			actions = append(actions, sa.ResponseAction)
			if sa.ResponseAction == "errors" {
				want := slotBlockIDOf(t, []slacktest.View{va, vb}[i])
				for k, msg := range sa.Errors {
					if k != want || !strings.Contains(msg, "being made right now") {
						t.Errorf("error at %s: %q, want at the time select %s", k, msg, want)
					}
				}
			}
		}
		slices.Sort(actions)
		if !slices.Equal(actions, []string{"errors", "update"}) {
			t.Errorf("acks %v, want one update and one errors", actions)
		}
		h.waitView("Booked", func(v slacktest.View) bool { return strings.Contains(textOf(v.Blocks), "Booked") })
		h.wantPosts(1)
	})
	t.Run("a fresh form after the first finished", func(t *testing.T) {
		t.Parallel()
		h, _ := journaledHarness(t, true)
		vb := h.openModal(bob, "intro-call")
		h.submit(ada, h.openModal(ada, "intro-call").ID, bookingInputs(firstSlot, "grace@example.com"))
		h.dm(ada, "Booked")
		h.drain()
		id := bookedFor(h, "grace@example.com")

		// Bob, moments later, books the same attendee at the same time from
		// the form he had open.
		h.submit(bob, vb.ID, bookingInputs(firstSlot, "Grace@Example.com"))
		m := h.dm(bob, "Already booked")
		text := textOf(m.Blocks)
		for _, want := range []string{"<@" + ada + ">", "Nothing was sent"} {
			if !strings.Contains(text, want) {
				t.Errorf("the answer does not say %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, id) {
			t.Errorf("the answer shows the booking's ID:\n%s", text)
		}
		h.wantPosts(1)
	})
}

// A slow re-check of the slot leaves the create its own time, and the
// person is told the outcome even when the work's time is up.
func TestSlowRecheckLeavesTheCreateItsTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(_ *harness, cfg *bot.Config) { cfg.WorkTimeout = 1200 * time.Millisecond })
	v := h.openModal(ada, "intro-call")
	h.clock.Advance(3 * time.Minute) // the form's slots are stale: they are checked again
	h.sb.SetLatency(bookingtest.EndpointSlots, 800*time.Millisecond)
	h.sb.SetLatency(bookingtest.EndpointCreateBooking, 700*time.Millisecond)
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	h.dm(ada, "Booked")
	h.wantPosts(1)
}

// Every outcome of a create is told as it is.
func TestBookingOutcomes(t *testing.T) {
	t.Parallel()
	outcome := func(h *harness, viewID, want string) slacktest.View {
		h.t.Helper()
		return h.waitView(fmt.Sprintf("%s saying %q", viewID, want), func(v slacktest.View) bool {
			return v.ID == viewID && strings.Contains(textOf(v.Blocks), want)
		})
	}

	t.Run("slot taken since the list", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		takeSlot(h, "someone@example.com")
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		out := outcome(h, v.ID, "Not booked: that time is not free.")
		if len(elements(out.Blocks, "pick_another")) != 1 {
			t.Errorf("no Pick another time button:\n%s", textOf(out.Blocks))
		}
		h.dm(ada, "Not booked")
		if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 1 {
			t.Errorf("%d POST /bookings", n)
		}
		// Pick another time: fresh slots, without the taken one.
		h.interact(slacktest.BlockAction(ada, "pick_another", "", slacktest.InView(out)))
		again := h.waitView("with fresh slots", func(x slacktest.View) bool {
			return x.ID == v.ID && len(elements(x.Blocks, "slot")) == 1
		})
		opts := options(elements(again.Blocks, "slot")[0])
		if len(opts) == 0 || opts[0].value == firstSlot {
			t.Errorf("fresh slots still offer the taken one: %v", opts[:min(2, len(opts))])
		}
		if name := elements(again.Blocks, "name"); len(name) != 1 || str(name[0], "initial_value") != "Grace Hopper" {
			t.Errorf("the attendee's name is not kept: %v", name)
		}

		// The same button in the message the person keeps opens a new modal.
		dm := h.dm(ada, "Not booked")
		modals := len(h.sl.Views())
		h.interact(slacktest.BlockAction(ada, "pick_another", "", slacktest.InMessage(dm)))
		fresh := h.waitView("opened from the DM", func(x slacktest.View) bool {
			return x.ID != v.ID && x.TriggerUser == ada && len(elements(x.Blocks, "slot")) == 1
		})
		if len(h.sl.Views()) != modals+1 {
			t.Errorf("%d views, want one more", len(h.sl.Views()))
		}
		if init, _ := elements(fresh.Blocks, "event_type")[0]["initial_option"].(map[string]any); str(init, "value") != "intro-call" {
			t.Errorf("event type of the new modal: %v", init)
		}
		// The form comes back as it was, but for the time.
		kept := map[string]string{"name": "Grace Hopper", "email": "grace@example.com", "note": "Agenda: compilers & <b>bold</b> ideas"}
		for action, want := range kept {
			if els := elements(fresh.Blocks, action); len(els) != 1 || str(els[0], "initial_value") != want {
				t.Errorf("%s of the new modal: %v, want %q", action, els, want)
			}
		}
		if tz := elements(fresh.Blocks, "booker_tz"); len(tz) != 1 || str(tz[0]["initial_option"].(map[string]any), "value") != "America/New_York" {
			t.Errorf("the attendee's zone of the new modal: %v", tz)
		}
	})
	t.Run("slot gone and list stale", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		takeSlot(h, "someone@example.com")
		h.clock.Advance(3 * time.Minute)
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		outcome(h, v.ID, "no longer free")
		// A slot the re-check found gone is not sent.
		h.wantPosts(0)
		if n := len(h.requests(bookingtest.EndpointSlots)); n != 2 {
			t.Errorf("%d GET /slots, want the modal's and the re-check", n)
		}
	})
	t.Run("a form left open names the event type by its title", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		h.clock.Advance(5 * time.Minute) // the event types read are no longer recent
		h.submit(ada, v.ID, bookingInputs(v.Options("slot")[1].Value, "grace@example.com"))
		if text := textOf(outcome(h, v.ID, "Booked.").Blocks); !strings.Contains(text, "Intro call with") {
			t.Errorf("outcome names the event otherwise:\n%s", text)
		}
	})
	t.Run("committed then 503", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		h.sb.CommitThenFail(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		out := outcome(h, v.ID, "Booked.")
		if !strings.Contains(textOf(out.Blocks), "confirmed by finding it in the bookings list") {
			t.Errorf("reconciled booking not explained:\n%s", textOf(out.Blocks))
		}
	})
	t.Run("503 then check again", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		out := outcome(h, v.ID, "Probably not booked")
		rc := elements(out.Blocks, "recheck")
		if len(rc) != 1 || !strings.Contains(textOf(mustJSON(rc[0])), "Check again") {
			t.Fatalf("no Check again button:\n%s", textOf(out.Blocks))
		}
		unclear := h.dm(ada, "Probably not booked")
		// Someone finds it was booked after all.
		id := takeSlot(h, "grace@example.com")
		h.interact(slacktest.BlockAction(ada, "recheck", "", slacktest.InView(out)))
		done := outcome(h, v.ID, "Booked.")
		if strings.Contains(textOf(done.Blocks), id) {
			t.Errorf("recheck outcome shows the ID %s:\n%s", id, textOf(done.Blocks))
		}
		if dm := h.dm(ada, "Booked."); !slices.Contains(values(elements(dm.Blocks, "cancel_booking")), id) {
			t.Errorf("the message kept after the recheck cancels %v, want %s", values(elements(dm.Blocks, "cancel_booking")), id)
		}
		// Check again from the message the person keeps replaces it.
		h.interact(slacktest.BlockAction(ada, "recheck", "", slacktest.InMessage(unclear)))
		replaced := h.waitMessage("recheck from the DM", func(m slacktest.Message) bool {
			return m.Kind == "response_url" && m.OriginalTS == unclear.TS && strings.Contains(textOf(m.Blocks), "Booked.")
		})
		if !replaced.ReplaceOriginal || !slices.Contains(values(elements(replaced.Blocks, "cancel_booking")), id) {
			t.Errorf("recheck from the DM: %+v", replaced)
		}
		// Check again must never book.
		h.wantPosts(1)
	})
	t.Run("429", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		f := bookingtest.JSONError(429, "not booked", 429)
		f.RetryAfter = "120"
		h.sb.FailNext(bookingtest.EndpointCreateBooking, f)
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		// One attempt in the minute: the event type's limit, its Retry-After kept.
		out := outcome(h, v.ID, "Refused by the booking service: too many attempts for this event type.")
		if text := textOf(out.Blocks); !strings.Contains(text, "bookbot holds bookings of Intro call back for 2 minutes; other event types can be booked now") {
			t.Errorf("429 outcome:\n%s", text)
		}
	})
	t.Run("429 whose hold the limiter could not record", func(t *testing.T) {
		t.Parallel()
		h := newHarnessWith(t, []booking.Option{booking.WithLimiter(throttledFails{booking.NewGuard(booking.DefaultLimits, nil)})})
		v := h.openModal(ada, "intro-call")
		h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(429, "not booked", 429))
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		// Which limit it met, and whether anything is held, is not known.
		text := textOf(outcome(h, v.ID, "Refused by the booking service: too many attempts.").Blocks)
		for _, claim := range []string{"holds", "this event type", "other event types"} {
			if strings.Contains(text, claim) {
				t.Errorf("outcome says %q:\n%s", claim, text)
			}
		}
	})
	t.Run("an event type's hour used up", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.sb.ExhaustEventLimit(bookingtest.DemoOwner, "intro-call")
		v := h.openModal(ada, "intro-call")
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		text := textOf(outcome(h, v.ID, "Refused by the booking service: too many attempts for this event type.").Blocks)
		for _, want := range []string{"can take up to an hour to clear", "holds bookings of Intro call back for 1 hour", "Book another event type"} {
			if !strings.Contains(text, want) {
				t.Errorf("outcome lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "minute") {
			t.Errorf("outcome promises a minute:\n%s", text)
		}
		// Another event type, under its limits, books; intro-call is held.
		other := h.openModal(ada, "consultation")
		h.submit(ada, other.ID, bookingInputs(other.Options("slot")[0].Value, "grace@example.com"))
		outcome(h, other.ID, "Booked.")
		again := h.openModal(ada, "intro-call")
		h.submit(ada, again.ID, bookingInputs(again.Options("slot")[1].Value, "ada@example.com"))
		outcome(h, again.ID, "Try again in 1 hour.")
		h.wantPosts(2)
	})
	t.Run("the service full", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.sb.Full(bookingtest.DemoOwner)
		v := h.openModal(ada, "intro-call")
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		text := textOf(outcome(h, v.ID, "Not booked: the booking service takes no new bookings.").Blocks)
		for _, untrue := range []string{"unclear", "clearly", "few minutes", "Check again"} {
			if strings.Contains(text, untrue) {
				t.Errorf("outcome says %q:\n%s", untrue, text)
			}
		}
		h.wantPosts(1)
	})
	t.Run("the attendee blocked", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.sb.SetBlocked(bookingtest.DemoOwner, "example.com")
		v := h.openModal(ada, "intro-call")
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		text := textOf(outcome(h, v.ID, "Not booked: the booking service refused this booking for this attendee.").Blocks)
		if !strings.Contains(text, "(example.com)") || strings.Contains(text, "access") {
			t.Errorf("outcome:\n%s", text)
		}
	})
	t.Run("a note the event type requires", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.sb.AddEventType(bookingtest.DemoOwner, bookingtest.EventType{Slug: "intake", Title: "Intake", DurationMinutes: 30, RequiresNote: true})
		v := h.openModal(ada, "intake")
		in := bookingInputs(v.Options("slot")[0].Value, "grace@example.com")
		delete(in, "note")
		h.submit(ada, v.ID, in)
		text := textOf(outcome(h, v.ID, "Not booked: the booking service refused the form.").Blocks)
		if !strings.Contains(text, "the event type may require one") || !strings.Contains(text, "Add a note") {
			t.Errorf("outcome:\n%s", text)
		}
		// With a note it books.
		in["note"] = "About the intake"
		again := h.openModal(ada, "intake")
		h.submit(ada, again.ID, in)
		outcome(h, again.ID, "Booked.")
	})
	t.Run("rebooking after a cancel", func(t *testing.T) {
		t.Parallel()
		h, _ := journaledHarness(t, true)
		h.submit(ada, h.openModal(ada, "intro-call").ID, bookingInputs(firstSlot, "grace@example.com"))
		h.dm(ada, "Booked")
		h.drain()
		id := bookedFor(h, "grace@example.com")
		if res, err := h.client.Cancel(booking.WithActor(t.Context(), ada), id); err != nil || res.Outcome != booking.Cancelled {
			t.Fatalf("cancel: %+v, %v", res, err)
		}
		// The time is free again, and the service still refuses Grace at it.
		v := h.openModal(ada, "intro-call")
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		text := textOf(outcome(h, v.ID, "Not booked yet").Blocks)
		if !strings.Contains(text, "even one cancelled since") || strings.Contains(text, "check the bookings list") {
			t.Errorf("outcome:\n%s", text)
		}
		h.wantPosts(2)
	})
	t.Run("the service's own 429", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.sb.SetLimits(1, 20) // stricter than bookbot's guard: the service answers first
		h.submit(ada, h.openModal(ada, "intro-call").ID, bookingInputs(firstSlot, "grace@example.com"))
		h.dm(ada, "Booked")
		v := h.openModal(ada, "intro-call")
		h.submit(ada, v.ID, bookingInputs(v.Options("slot")[0].Value, "ada@example.com"))
		text := textOf(outcome(h, v.ID, "Refused by the booking service: too many attempts").Blocks)
		if strings.Contains(text, "Not sent") {
			t.Errorf("a request the service refused is said not to have been sent:\n%s", text)
		}
	})
	// A booking that may appear later is said to get a notice only where
	// one would announce it.
	for _, noticed := range []string{"", "intro-call", "consultation"} {
		t.Run("409 with status 200, notices of "+cmp.Or(noticed, "none"), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(_ *harness, c *bot.Config) {
				if noticed != "" {
					c.Noticed = func(slug string) bool { return slug == noticed }
				}
			})
			v := h.openModal(ada, "intro-call")
			h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 200))
			h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
			text := textOf(outcome(h, v.ID, "Not booked yet").Blocks)
			if promised, want := strings.Contains(text, "its notice says it came after this attempt"), noticed == "intro-call"; promised != want {
				t.Errorf("a notice promised: %v, want %v:\n%s", promised, want, text)
			}
		})
	}
	// Each kind of 409 says what it means; none is sent twice.
	for _, tt := range []struct {
		name  string
		fault func(*bookingtest.Server)
		want  []string
	}{
		{"409, the time not free", func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 409))
		}, []string{"Not booked: that time is not free.", "Pick another time"}},
		{"409, this attendee refused at this time", func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 200))
		}, []string{"Not booked yet: the attendee may need to confirm by email.", "even one cancelled since", "mailed them a link that books this time",
			"Check with the attendee before booking another time"}},
		{"409, and the list shows it booked", func(s *bookingtest.Server) {
			s.CommitThenFail(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 200))
		}, []string{"Already booked.", "refused to book it again"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			v := h.openModal(ada, "intro-call")
			tt.fault(h.sb)
			h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
			text := textOf(outcome(h, v.ID, tt.want[0]).Blocks)
			for _, want := range tt.want[1:] {
				if !strings.Contains(text, want) {
					t.Errorf("outcome lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(tt.name, "list shows") {
				if id := bookedFor(h, "grace@example.com"); strings.Contains(text, id) {
					t.Errorf("outcome shows the booking ID %s:\n%s", id, text)
				}
			}
			h.wantPosts(1)
		})
	}
}

// A slow booking API does not delay the ack or the modal.
func TestSlowBookingAPIModalOpensAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sb.SetLatency(bookingtest.EndpointEventTypes, 2*time.Second)
	h.sb.SetLatency(bookingtest.EndpointSlots, 2*time.Second)
	start := time.Now()
	ack := h.slash(ada, "new intro-call")
	if ack.Delay > 500*time.Millisecond {
		t.Errorf("ack took %v", ack.Delay)
	}
	open, err := h.sl.WaitCall(h.ctx(), "views.open")
	if err != nil || open.Error != "" {
		t.Fatalf("views.open: %v %q", err, open.Error)
	}
	if d := open.At.Sub(start); d > time.Second {
		t.Errorf("views.open %v after the command, the event types take 2 s", d)
	}
	var req struct {
		View json.RawMessage `json:"view"`
	}
	_ = json.Unmarshal(open.JSON, &req)
	if text := textOf(req.View); !strings.Contains(text, "Loading event types") {
		t.Errorf("first view:\n%s", text)
	}
	v := h.waitView("filled in", func(v slacktest.View) bool { return len(elements(v.Blocks, "slot")) == 1 })
	if v.Updates == 0 {
		t.Error("the modal was not updated")
	}
}

// The global shortcut opens the booking modal.
func TestShortcutOpensModal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.interact(slack.InteractionCallback{Type: slack.InteractionTypeShortcut, CallbackID: "book_meeting", User: slack.User{ID: ada}})
	v := h.waitView("from the shortcut", func(v slacktest.View) bool {
		return v.TriggerUser == ada && v.CallbackID == "booking_create" && len(elements(v.Blocks, "event_type")) == 1
	})
	if len(elements(v.Blocks, "name")) != 1 || len(elements(v.Blocks, "email")) != 1 {
		t.Error("modal lacks the attendee inputs")
	}
}

// The day and event type selects reload the modal's time choices.
func TestBookingModalSwitchDayAndEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	if days := options(elements(v.Blocks, "slot_day")[0]); len(days) < 10 || days[1].value != "2026-03-24" {
		t.Fatalf("days offered: %v", days)
	}

	// The person takes a while: the bot's cached event types have expired.
	h.clock.Advance(3 * time.Minute)
	h.interact(slacktest.BlockAction(ada, "slot_day", "2026-03-24", slacktest.InView(v)))
	tue := h.waitView("Tuesday's times", func(x slacktest.View) bool {
		els := elements(x.Blocks, "slot")
		return x.ID == v.ID && len(els) == 1 && len(options(els[0])) > 0 && options(els[0])[0].text == "09:15–09:30"
	})
	for _, o := range options(elements(tue.Blocks, "slot")[0]) {
		start, _ := time.Parse(time.RFC3339Nano, o.value)
		if start.In(berlin).Format("2006-01-02") != "2026-03-24" {
			t.Errorf("Tuesday offers %s", o.value)
		}
	}

	h.interact(slacktest.BlockAction(ada, "event_type", "consultation", slacktest.InView(tue)))
	cons := h.waitView("consultation's times", func(x slacktest.View) bool {
		els := elements(x.Blocks, "slot")
		return x.ID == v.ID && len(els) == 1 && len(options(els[0])) > 0 && options(els[0])[0].text == "11:30–12:00"
	})
	h.submit(ada, cons.ID, bookingInputs("2026-03-23T10:30:00Z", "grace@example.com"))
	h.waitView("Booked", func(x slacktest.View) bool { return x.ID == v.ID && strings.Contains(textOf(x.Blocks), "Booked") })
	h.drain()
	posts := h.requests(bookingtest.EndpointCreateBooking)
	if len(posts) != 1 || posts[0].Form.Get("event_type") != "consultation" || posts[0].Form.Get("end") != "2026-03-23T11:00:00Z" {
		t.Errorf("POST /bookings: %+v", posts)
	}

	// An event type the API cannot book is explained in the modal.
	h.slash(ada, "new team-sync")
	h.waitView("team-sync explained", func(x slacktest.View) bool {
		return x.ID != v.ID && strings.Contains(textOf(x.Blocks), "book it through the public booking page")
	})
	h.drain()
	for _, r := range h.requests(bookingtest.EndpointSlots) {
		if q := r.Form.Get("event_type"); q != "intro-call" && q != "consultation" {
			t.Errorf("GET /slots for %q", q)
		}
	}
}

// A Slack hiccup when looking up someone's zone shows UTC (named) once, and
// does not stick.
func TestUserZoneLookupFailureDoesNotStick(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sl.FailNext("users.info", "internal_error")
	h.slash(bob, "slots intro-call")
	h.reply(bob, "Times in UTC.")
	h.slash(bob, "slots intro-call")
	h.reply(bob, "Times in America/New_York (EDT)")
}

// A modal without event types (the API failed) can still be submitted by
// a person; the answer must be an error Slack can show, not a broken ack.
func TestSubmitWithoutEventTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for range 4 {
		h.sb.FailNext(bookingtest.EndpointEventTypes, bookingtest.HTMLError(503))
	}
	h.slash(ada, "new")
	v := h.waitView("explaining the failure", func(x slacktest.View) bool {
		return strings.Contains(textOf(x.Blocks), "Event types could not be loaded")
	})
	if strings.Contains(textOf(v.Blocks), "Loading") {
		t.Errorf("the failed modal still says Loading:\n%s", textOf(v.Blocks))
	}
	ack, err := h.sl.SubmitInputs(h.ctx(), ada, v.ID, map[string]string{"name": "Ada", "email": "ada@example.com"})
	if err != nil {
		t.Fatalf("submission: %v", err)
	}
	if sa := parseSubmissionAck(t, ack); sa.ResponseAction != "errors" {
		t.Errorf("ack %s", ack.Payload)
	}
	h.wantPosts(0)
}

// Free slots that cannot be loaded are said once, at the top of the form:
// not also as if there were none.
func TestSlotsFailureSaidOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for range 4 {
		h.sb.FailNext(bookingtest.EndpointSlots, bookingtest.HTMLError(503))
	}
	h.slash(ada, "new intro-call")
	v := h.waitView("explaining the failure", func(x slacktest.View) bool {
		return strings.Contains(textOf(x.Blocks), "Free slots could not be loaded")
	})
	if text := textOf(v.Blocks); strings.Contains(text, "No free slots") || strings.Contains(text, "Loading") {
		t.Errorf("the form says more than that the slots could not be loaded:\n%s", text)
	}
}

// A submission of a booking form bookbot did not make (a view it never
// opened, metadata changed on its way or without bookbot's signature) books
// nothing: it is told to open the form again. The same submission with the
// metadata as bookbot made it books.
func TestSubmissionOfAFormBookbotDidNotMakeBooksNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	real := slacktest.ViewSubmission(ada, v, map[string]map[string]slack.BlockAction{
		"event_type":        {"event_type": {Type: "static_select", SelectedOption: slack.OptionBlockObject{Value: "intro-call"}}},
		slotBlockIDOf(t, v): {"slot": {Type: "static_select", SelectedOption: slack.OptionBlockObject{Value: firstSlot}}},
		"name":              {"name": {Type: "plain_text_input", Value: "Grace Hopper"}},
		"email":             {"email": {Type: "email_text_input", Value: "grace@example.com"}},
		"booker_tz":         {"booker_tz": {Type: "external_select", SelectedOption: slack.OptionBlockObject{Value: "America/New_York"}}},
	})
	signed := real.View.PrivateMetadata
	sig, meta, ok := strings.Cut(signed, ".")
	if !ok || !strings.Contains(meta, `"e":"intro-call"`) {
		t.Fatalf("the form's metadata %q is not signed JSON", signed)
	}
	n := 0
	submit := func(ic slack.InteractionCallback) *slack.ViewSubmissionResponse {
		t.Helper()
		n++
		var ack any
		// As Slack would deliver it: straight to the bot, which Slack's
		// stand-in refuses to do for a view bookbot never opened.
		h.bot.Handle(socketmode.Event{Type: socketmode.EventTypeInteractive, Data: ic, Request: &socketmode.Request{EnvelopeID: fmt.Sprintf("E-submit-%d", n)}}, func(p any) { ack = p })
		resp, ok := ack.(*slack.ViewSubmissionResponse)
		if !ok {
			t.Fatalf("ack %#v, want a view submission response", ack)
		}
		return resp
	}
	for name, metadata := range map[string]string{
		"tampered":  sig + "." + strings.Replace(meta, `"e":"intro-call"`, `"e":"consultation"`, 1),
		"unsigned":  meta,
		"other key": signWith(bot.ViewKey("xapp-1-another-app"), real.View.CallbackID, meta),
		"empty":     "",
	} {
		forged := real
		forged.View.PrivateMetadata = metadata
		if resp := submit(forged); resp.ResponseAction != "errors" || !strings.Contains(resp.Errors["name"], "open the booking form again") {
			t.Errorf("%s metadata: ack %+v, want an error asking to open the form again", name, resp)
		}
	}
	unknown := real
	unknown.View.ID, unknown.View.PrivateMetadata = "VNEVEROPENED", `{"e":"intro-call"}`
	if resp := submit(unknown); resp.ResponseAction != "errors" {
		t.Errorf("a view bookbot never opened: ack %+v, want errors", resp)
	}
	h.wantPosts(0)
	if logs := h.logs.String(); strings.Count(logs, "booking form submission refused") != 5 || strings.Contains(logs, "grace@example.com") {
		t.Errorf("the refusals are not logged once each, or their log holds the attendee:\n%s", logs)
	}

	if resp := submit(real); resp.ResponseAction != "update" {
		t.Fatalf("the form as bookbot made it: ack %+v, want the booking under way", resp)
	}
	h.dm(ada, "Booked")
	h.wantPosts(1)
}

// signWith is meta signed as bookbot signs a form's metadata, with key.
func signWith(key []byte, callbackID, meta string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(callbackID + "\x00"))
	m.Write([]byte(meta))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)) + "." + meta
}

// "Choose a time." is shown at the time select, not at the day select next
// to it, however the submission's state is ordered.
func TestMissingTimeErrorAtTimeSelect(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	slotBlock := slotBlockIDOf(t, v)
	for range 12 { // map order is random: one lucky pass proves nothing
		// Sent as a raw payload: Slack's client would refuse the empty
		// required select, but a stale client or automation may not.
		ack := h.interact(slacktest.ViewSubmission(ada, v, map[string]map[string]slack.BlockAction{
			"name":  {"name": {Type: "plain_text_input", Value: "Ada"}},
			"email": {"email": {Type: "email_text_input", Value: "ada@example.com"}},
		}))
		sa := parseSubmissionAck(t, ack)
		if sa.ResponseAction != "errors" || sa.Errors[slotBlock] != "Choose a time." || len(sa.Errors) != 1 {
			t.Fatalf("errors %v, want \"Choose a time.\" at %s", sa.Errors, slotBlock)
		}
	}
	h.wantPosts(0)
}

// A booking the service refused for its input, or held back for its
// limits, can be edited and tried again from the outcome: the form comes
// back as it was, the time included, and nothing is sent until it is
// submitted.
func TestEditAndTryAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.PlainText(413, "request too large"))
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	dm := h.dm(ada, "shorten the note")
	if len(elements(dm.Blocks, "edit_booking")) != 1 {
		t.Fatalf("no Edit and try again:\n%s", dm.Blocks)
	}
	h.drain()
	h.interact(slacktest.BlockAction(ada, "edit_booking", "", slacktest.InMessage(dm)))
	again := h.waitView("the form again", func(x slacktest.View) bool {
		els := elements(x.Blocks, "slot")
		if x.ID == v.ID || x.TriggerUser != ada || len(els) != 1 {
			return false
		}
		init, _ := els[0]["initial_option"].(map[string]any)
		return str(init, "value") == firstSlot
	})
	for action, want := range map[string]string{"name": "Grace Hopper", "email": "grace@example.com"} {
		if els := elements(again.Blocks, action); len(els) != 1 || str(els[0], "initial_value") != want {
			t.Errorf("%s of the form again: %v, want %q", action, els, want)
		}
	}
	// Opening the form again sends nothing.
	h.wantPosts(1)
}

// throttledFails is a limiter whose Throttled fails, as one on a database
// that went away between a create and its 429.
type throttledFails struct{ booking.Limiter }

func (throttledFails) Throttled(context.Context, string, time.Duration) (time.Duration, bool, error) {
	return 0, false, errors.New("connection refused")
}
