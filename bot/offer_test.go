package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/store/bolt"
)

// grace is not on the allow-list; an offer names her.
const grace = "UGRACE"

// offerHarness is the harness with offers kept in an embedded store, Grace
// in the workspace, and a channel where Ada, Grace and Eve talk.
func offerHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, func(h *harness, c *bot.Config) {
		db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
		if err != nil {
			t.Fatal(err)
		}
		c.Offers = db.Offers()
	})
	h.sl.AddUser(slacktest.User{ID: grace, Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, grace, eve, bob}})
	return h
}

// offerCard posts `offer text` as Ada in the team channel and returns the
// card once it is there.
func (h *harness) offerCard(text string) slacktest.Message {
	h.t.Helper()
	if _, err := h.sl.SendSlashCommand(h.ctx(), slacktest.SlashCommand{Command: "/booking", Text: "offer " + text, UserID: ada, ChannelID: "C0TEAM"}); err != nil {
		h.t.Fatal(err)
	}
	return h.waitMessage("the offer card", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.ResponseType == "in_channel" && strings.HasPrefix(m.Text, "Offer")
	})
}

// pick presses a time on the card as user.
func (h *harness) pick(user string, card slacktest.Message, value string) {
	h.t.Helper()
	h.interact(slacktest.BlockAction(user, "offer_slot", value, slacktest.InMessage(card)))
}

func TestOfferNamedPersonBooksWithOneForm(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call <@UGRACE|grace>")
	times := values(elements(card.Blocks, "offer_slot"))
	if len(times) == 0 || len(times) > 5 {
		t.Fatalf("card offers %d times:\n%s", len(times), card.Blocks)
	}
	if !strings.Contains(times[0], firstSlot) {
		t.Errorf("first time's value %q does not hold the slot's start %q", times[0], firstSlot)
	}
	before := len(h.sb.Requests())

	// Eve is not named: told so, and nothing is asked of the booking API.
	h.pick(eve, card, times[0])
	h.reply(eve, "This offer is for <@UGRACE>")
	h.drain()
	if n := len(h.sb.Requests()); n != before {
		t.Errorf("a refused click made %d booking API calls", n-before)
	}

	h.pick(grace, card, times[0])
	form := h.waitView("the offer's form", func(v slacktest.View) bool {
		return v.TriggerUser == grace && v.CallbackID == "offer_book"
	})
	// A second time, picked before the first is booked.
	h.pick(grace, card, times[1])
	second := h.waitView("a second form", func(v slacktest.View) bool {
		return v.TriggerUser == grace && v.CallbackID == "offer_book" && v.ID != form.ID
	})
	if txt := string(form.Blocks); !strings.Contains(txt, "Grace Hopper") || !strings.Contains(txt, "grace@example.com") || !strings.Contains(txt, "America/New_York") {
		t.Errorf("the form does not carry Grace's profile:\n%s", form.Blocks)
	}
	h.submit(grace, form.ID, map[string]string{"note": "Looking forward"})
	booked := h.waitMessage("the card, booked", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.OriginalTS == card.TS && strings.HasPrefix(m.Text, "Booked")
	})
	posts := h.requests("POST /bookings")
	if len(posts) != 1 {
		t.Fatalf("%d POST /bookings, want 1", len(posts))
	}
	f := posts[0].Form
	if f.Get("name") != "Grace Hopper" || f.Get("email") != "grace@example.com" || f.Get("booker_tz") != "America/New_York" || f.Get("start") != firstSlot {
		t.Errorf("POST /bookings form %v", f)
	}
	id := bookedFor(h, "grace@example.com")
	if e, p := metaOf(booked); e != "bookbot_offer_booked" || p["booking_id"] != id || p["booked_by"] != "UGRACE" || strings.Contains(booked.Text+textOf(booked.Blocks), id) ||
		len(elements(booked.Blocks, "offer_slot")) != 0 || !strings.Contains(textOf(booked.Blocks), "booked by <@UGRACE>") {
		t.Errorf("booked card %q:\n%s", booked.Text, booked.Blocks)
	}
	// Through the click's response_url too, the booked card carries its
	// booking for automation.
	if !strings.Contains(string(booked.Metadata), `"event_type":"bookbot_offer_booked"`) || !strings.Contains(string(booked.Metadata), `"booking_id":"`+id+`"`) {
		t.Errorf("booked card's metadata %s", booked.Metadata)
	}
	h.dm(ada, "Booked from your offer")
	h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(string(v.Blocks), "Booked")
	})

	// The second form, sent now the offer is booked: told so, nothing sent.
	h.drain()
	before = len(h.sb.Requests())
	h.submit(grace, second.ID, map[string]string{})
	h.waitView("the second form's outcome", func(v slacktest.View) bool {
		return v.ID == second.ID && strings.Contains(string(v.Blocks), "already booked")
	})
	h.drain()
	if n := len(h.sb.Requests()); n != before {
		t.Errorf("a click on a booked offer made %d booking API calls", n-before)
	}
}

// An offer of two meetings to Grace and Bob: Grace books one, and neither
// another click of hers nor a second form she opened before sends
// anything; Bob books the other.
func TestOfferEachPersonBooksOne(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call <@UGRACE|grace> <@UBOB|bob> n=2")
	times := values(elements(card.Blocks, "offer_slot"))
	form := func(user, time string) slacktest.View {
		h.t.Helper()
		before := map[string]bool{}
		for _, v := range h.sl.Views() {
			before[v.ID] = true
		}
		h.pick(user, card, time)
		return h.waitView("the offer's form", func(v slacktest.View) bool {
			return !before[v.ID] && v.TriggerUser == user && v.CallbackID == "offer_book"
		})
	}
	first, second := form(grace, times[0]), form(grace, times[1])
	h.submit(grace, first.ID, map[string]string{})
	h.waitView("her first form's outcome", func(v slacktest.View) bool {
		return v.ID == first.ID && strings.Contains(string(v.Blocks), "Booked")
	})
	h.submit(grace, second.ID, map[string]string{})
	h.waitView("her second form's outcome", func(v slacktest.View) bool {
		return v.ID == second.ID && strings.Contains(string(v.Blocks), "already booked a meeting from this offer")
	})
	h.drain()
	opened := len(h.sl.Views())
	h.pick(grace, card, times[2])
	h.reply(grace, "Each person books one meeting of an offer")
	h.drain()
	if n := len(h.sl.Views()); n != opened {
		t.Errorf("a click of someone who booked from the offer opened a form")
	}
	if n := len(h.requests("POST /bookings")); n != 1 {
		t.Fatalf("%d POST /bookings after Grace's forms, want 1", n)
	}

	h.submit(bob, form(bob, times[2]).ID, map[string]string{"email": "bob@example.com"})
	booked := h.waitMessage("the card, booked twice", func(m slacktest.Message) bool {
		return m.OriginalTS == card.TS && strings.HasPrefix(m.Text, "Booked")
	})
	if txt := textOf(booked.Blocks); !strings.Contains(txt, "booked by <@UGRACE>") || !strings.Contains(txt, "booked by <@UBOB>") {
		t.Errorf("the booked card does not name both:\n%s", txt)
	}
}

func TestOfferExpires(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call")
	times := values(elements(card.Blocks, "offer_slot"))
	h.drain()
	before := len(h.sb.Requests())
	h.clock.Advance(bot.DefaultOfferTTL)
	h.pick(eve, card, times[0])
	h.reply(eve, "This offer expired")
	h.waitMessage("the card, expired", func(m slacktest.Message) bool {
		return m.OriginalTS == card.TS && strings.HasPrefix(m.Text, "Expired")
	})
	h.drain()
	if n := len(h.sb.Requests()); n != before {
		t.Errorf("a click on an expired offer made %d booking API calls", n-before)
	}
}

func TestOfferWithdrawn(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call")
	times := values(elements(card.Blocks, "offer_slot"))
	id := values(elements(card.Blocks, "offer_withdraw"))[0]
	h.interact(slacktest.BlockAction(bob, "offer_withdraw", id, slacktest.InMessage(card)))
	h.reply(bob, "Only <@UADA> can withdraw")
	// Eve has the form open when Ada withdraws the offer.
	h.pick(eve, card, times[0])
	form := h.waitView("the offer's form", func(v slacktest.View) bool {
		return v.TriggerUser == eve && v.CallbackID == "offer_book"
	})
	h.interact(slacktest.BlockAction(ada, "offer_withdraw", id, slacktest.InMessage(card)))
	h.waitMessage("the card, withdrawn", func(m slacktest.Message) bool {
		return m.OriginalTS == card.TS && strings.HasPrefix(m.Text, "Withdrawn")
	})
	h.drain()
	before := len(h.sb.Requests())
	h.submit(eve, form.ID, map[string]string{"name": "Eve Mallory", "email": "eve@example.com"})
	h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(string(v.Blocks), "withdrew this offer")
	})
	h.drain()
	if n := len(h.sb.Requests()); n != before {
		t.Errorf("a click on a withdrawn offer made %d booking API calls", n-before)
	}
}

// The time clicked is taken before the form is sent: the form says so,
// nothing is sent, and the card shows the times still free.
func TestOfferTimeTakenMeanwhile(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call")
	times := values(elements(card.Blocks, "offer_slot"))
	h.pick(eve, card, times[0])
	form := h.waitView("the offer's form", func(v slacktest.View) bool {
		return v.TriggerUser == eve && v.CallbackID == "offer_book"
	})
	takeSlot(h, "someone@example.com")
	h.submit(eve, form.ID, map[string]string{"name": "Eve Mallory", "email": "eve@example.com"})
	h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(string(v.Blocks), "just taken")
	})
	fresh := h.waitMessage("the card, refreshed", func(m slacktest.Message) bool {
		return m.OriginalTS == card.TS && strings.HasPrefix(m.Text, "Offer")
	})
	if got := values(elements(fresh.Blocks, "offer_slot")); len(got) == 0 || got[0] == times[0] {
		t.Errorf("refreshed card still offers the taken time: %v", got)
	}
	if n := len(h.requests("POST /bookings")); n != 0 {
		t.Errorf("%d POST /bookings for a time taken meanwhile", n)
	}
}

// Two forms for one time of an offer of two: while the first one's booking
// is unsettled, the second is told the time is taken and sends nothing.
func TestOfferTimeHeldByAnotherForm(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call n=2")
	first := values(elements(card.Blocks, "offer_slot"))[0]
	form := func(user string) slacktest.View {
		h.pick(user, card, first)
		return h.waitView("the offer's form", func(v slacktest.View) bool {
			return v.TriggerUser == user && v.CallbackID == "offer_book"
		})
	}
	eveForm, graceForm := form(eve), form(grace)
	h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
	h.submit(eve, eveForm.ID, map[string]string{"name": "Eve Mallory", "email": "eve@example.com"})
	h.waitView("the first form's outcome", func(v slacktest.View) bool {
		return v.ID == eveForm.ID && strings.Contains(string(v.Blocks), "Not sure it was booked")
	})
	h.submit(grace, graceForm.ID, map[string]string{"name": "Grace Hopper", "email": "grace@example.com"})
	h.waitView("the second form's outcome", func(v slacktest.View) bool {
		return v.ID == graceForm.ID && strings.Contains(string(v.Blocks), "just taken")
	})
	if n := len(h.requests("POST /bookings")); n != 1 {
		t.Errorf("%d POST /bookings for one time, want 1", n)
	}
}

// The offerer asked to check an unclear booking from their offer is told
// the event type by its title, from their calendar's event types, not by
// its slug.
func TestOfferUnclearNamesTheEventTypeByItsTitle(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call")
	h.pick(eve, card, values(elements(card.Blocks, "offer_slot"))[0])
	form := h.waitView("the offer's form", func(v slacktest.View) bool { return v.TriggerUser == eve && v.CallbackID == "offer_book" })
	h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
	h.submit(eve, form.ID, map[string]string{"name": "Eve Mallory", "email": "eve@example.com"})
	dm := h.dm(ada, "Probably not booked")
	if text := textOf(dm.Blocks); !strings.Contains(text, "Intro call today at") || strings.Contains(text, "intro-call") {
		t.Errorf("the offerer's message names the event otherwise:\n%s", text)
	}
}

// failingUpdates is an offer store whose updates after the first few fail.
type failingUpdates struct {
	offer.Store
	ok atomic.Int32 // updates left to pass
}

func (s *failingUpdates) Update(ctx context.Context, id string, fn func(*offer.Offer) error) (offer.Offer, error) {
	if s.ok.Add(-1) < 0 {
		return offer.Offer{}, errors.New("disk full")
	}
	return s.Store.Update(ctx, id, fn)
}

// A booking made from an offer that cannot be recorded in it is still
// told, in full, to the offerer and the clicker, and logged.
func TestOfferBookedButNotRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(h *harness, c *bot.Config) {
		db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
		if err != nil {
			t.Fatal(err)
		}
		s := &failingUpdates{Store: db.Offers()}
		s.ok.Store(2) // the take, and its mark as sent
		c.Offers = s
	})
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, eve}})
	card := h.offerCard("intro-call")
	h.pick(eve, card, values(elements(card.Blocks, "offer_slot"))[0])
	form := h.waitView("the offer's form", func(v slacktest.View) bool {
		return v.TriggerUser == eve && v.CallbackID == "offer_book"
	})
	h.submit(eve, form.ID, map[string]string{"name": "Eve Mallory", "email": "eve@example.com"})
	h.dm(ada, "Booked from your offer: Intro call")
	h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(string(v.Blocks), "Intro call with Ada")
	})
	if !strings.Contains(h.logs.String(), "could not be recorded") {
		t.Errorf("the unrecorded booking is not logged:\n%s", h.logs)
	}
}

func TestOfferMoreTimes(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call n=2")
	id := values(elements(card.Blocks, "offer_more"))[0]
	h.interact(slacktest.BlockAction(eve, "offer_more", id, slacktest.InMessage(card)))
	more := h.waitView("more times", func(v slacktest.View) bool {
		return v.TriggerUser == eve && v.CallbackID == "offer_more_times" && len(elements(v.Blocks, "offer_pick")) > 0
	})
	opts := options(elements(more.Blocks, "offer_pick")[0])
	h.interact(slacktest.BlockAction(eve, "offer_pick", opts[len(opts)-1].value, slacktest.InView(more)))
	form := h.waitView("the offer's form in place of the times", func(v slacktest.View) bool {
		return v.ID == more.ID && v.CallbackID == "offer_book"
	})
	h.submit(eve, form.ID, map[string]string{"name": "Eve Mallory", "email": "eve@example.com"})
	h.waitMessage("the card, with one booked and one left", func(m slacktest.Message) bool {
		return m.OriginalTS == card.TS && strings.HasPrefix(m.Text, "Offer") && strings.Contains(textOf(m.Blocks), "Booked so far")
	})
	if n := len(h.requests("POST /bookings")); n != 1 {
		t.Errorf("%d POST /bookings, want 1", n)
	}
}

func TestOfferArguments(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	for text, want := range map[string]string{
		"offer":                   "Say which event type",
		"offer intro-call @grace": "can't tell who",
		"offer intro-call n=0":    "from 1 to 10",
		"offer a b":               "One event type only",
		"offer intro-call <@UGRACE|grace> <@UBOB|bob> n=3": "names 2 people and each person books one",
	} {
		ack := parseEphemeral(t, h.slash(ada, text))
		if ack.ResponseType != "ephemeral" || !strings.Contains(ack.Text+string(ack.Blocks), want) {
			t.Errorf("%q: ack %+v, want it to say %q", text, ack, want)
		}
	}
	if n := len(h.sb.Requests()); n != 0 {
		t.Errorf("bad arguments made %d booking API calls", n)
	}
}

// Only solo event types can be booked through the API; the others are
// offered through the public booking page, and no card is posted.
func TestOfferRefusesEventTypesTheAPICannotBook(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	h.slash(ada, "offer team-sync")
	m := h.reply(ada, "cannot be offered")
	if txt := textOf(m.Blocks); !strings.Contains(txt, "public booking page") {
		t.Errorf("the refusal does not point to the public booking page:\n%s", txt)
	}
	h.drain()
	for _, m := range h.sl.Messages() {
		if m.ResponseType == "in_channel" {
			t.Errorf("a card was posted for an event type the API cannot book: %s", m.Text)
		}
	}
	if n := len(h.requests("POST /bookings")); n != 0 {
		t.Errorf("%d POST /bookings, want none", n)
	}
}

// A "More times" modal opened before the message shortcut took its
// callback_id (offer_times) still opens the form of a time picked in it.
func TestOfferMoreTimesOpenedBeforeTheUpgrade(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call")
	h.interact(slacktest.BlockAction(eve, "offer_more", values(elements(card.Blocks, "offer_more"))[0], slacktest.InMessage(card)))
	more := h.waitView("more times", func(v slacktest.View) bool {
		return v.TriggerUser == eve && v.CallbackID == "offer_more_times" && len(elements(v.Blocks, "offer_pick")) > 0
	})
	// The modal as an older bookbot made it: its callback_id and signature.
	var view slack.ModalViewRequest
	if err := json.Unmarshal(more.Raw, &view); err != nil {
		t.Fatal(err)
	}
	view.CallbackID = "offer_times"
	view.PrivateMetadata = bot.Signed(h.bot, "offer_times", bot.Unsigned(h.bot, "offer_more_times", more.PrivateMetadata))
	old := slack.New(h.sl.BotToken(), slack.OptionAPIURL(h.sl.APIURL))
	if _, err := old.UpdateViewContext(h.ctx(), view, "", "", more.ID); err != nil {
		t.Fatal(err)
	}
	more, _ = h.sl.View(more.ID)
	opts := options(elements(more.Blocks, "offer_pick")[0])
	h.interact(slacktest.BlockAction(eve, "offer_pick", opts[0].value, slacktest.InView(more)))
	h.waitView("the offer's form in place of the times", func(v slacktest.View) bool {
		return v.ID == more.ID && v.CallbackID == "offer_book"
	})
}

// A guest who booked from an offer cancels that booking, and only that:
// in the form's outcome, on the offer's calendar, journaled as theirs, and
// the offerer is told. Someone else pressing the same Cancel is refused,
// and nothing is sent.
func TestOfferGuestCancelsTheirOwnBooking(t *testing.T) {
	t.Parallel()
	h, j := journaledHarness(t, false, func(h *harness, c *bot.Config) {
		db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
		if err != nil {
			t.Fatal(err)
		}
		c.Offers = db.Offers()
	})
	h.sl.AddUser(slacktest.User{ID: grace, Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, grace, eve, bob}})
	card := h.offerCard("intro-call <@UGRACE|grace>")
	h.pick(grace, card, values(elements(card.Blocks, "offer_slot"))[0])
	form := h.waitView("the offer's form", func(v slacktest.View) bool { return v.TriggerUser == grace && v.CallbackID == "offer_book" })
	h.submit(grace, form.ID, map[string]string{})
	done := h.waitView("booked", func(v slacktest.View) bool { return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "Booked") })
	id := bookedFor(h, "grace@example.com")
	cancel := elements(done.Blocks, "offer_cancel")
	if len(cancel) != 1 || !strings.HasSuffix(str(cancel[0], "value"), " "+id) || cancel[0]["confirm"] == nil || strings.Contains(textOf(done.Blocks), id) {
		t.Fatalf("the guest's outcome: Cancel %v; want one that asks first, and no ID shown:\n%s", cancel, textOf(done.Blocks))
	}
	value := str(cancel[0], "value")
	h.drain()
	before := len(h.sb.Requests())

	// Eve did not book it: refused, and nothing is asked of the service
	// (Slack shows Grace's form to Grace alone; bookbot does not rely on it).
	h.interact(slacktest.BlockAction(eve, "offer_cancel", value, slacktest.InView(done)))
	h.dm(eve, "Only the person who booked this time from the offer can cancel it")
	// Nor does a Cancel naming another booking cancel that one for Grace.
	other := strings.Replace(value, id, "5eed0000-0000-4000-8000-000000000001", 1)
	h.interact(slacktest.BlockAction(grace, "offer_cancel", other, slacktest.InView(done)))
	h.dm(grace, "Only the person who booked this time from the offer can cancel it")
	h.drain()
	if n := len(h.sb.Requests()); n != before {
		t.Fatalf("refused cancels made %d booking API calls", n-before)
	}

	h.interact(slacktest.BlockAction(grace, "offer_cancel", value, slacktest.InView(done)))
	out := h.waitView("cancelled", func(v slacktest.View) bool { return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "Cancelled") })
	if text := textOf(out.Blocks); !strings.Contains(text, "*Cancelled:* Intro call with Ada Lovelace") || !strings.Contains(text, "<@UADA> has been told") {
		t.Errorf("the guest is told:\n%s", text)
	}
	h.dm(ada, "Cancelled by <@UGRACE>")
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if b.ID == id && !b.Cancelled {
			t.Errorf("%s is not cancelled", id)
		}
	}
	entries, err := j.Since(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if last := entries[len(entries)-1]; last.Op != booking.OpCancel || last.Actor != grace || last.BookingID != id || last.Outcome != booking.Cancelled {
		t.Errorf("the journal's last entry %+v, want Grace's cancel of %s", last, id)
	}

	// Her time is the offer's again: she may book from it once more.
	h.pick(grace, card, values(elements(card.Blocks, "offer_slot"))[0])
	h.waitView("a new form for Grace", func(v slacktest.View) bool {
		return v.ID != form.ID && v.TriggerUser == grace && v.CallbackID == "offer_book"
	})
}

// A booking from an offer refused for now says what was not booked, and
// its Try again opens the form for the same time in its place.
func TestOfferNotBookedOffersTryAgain(t *testing.T) {
	t.Parallel()
	h := offerHarness(t)
	card := h.offerCard("intro-call <@UGRACE|grace>")
	h.pick(grace, card, values(elements(card.Blocks, "offer_slot"))[0])
	form := h.waitView("the offer's form", func(v slacktest.View) bool { return v.TriggerUser == grace && v.CallbackID == "offer_book" })
	h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(429, "too many", 0))
	h.submit(grace, form.ID, map[string]string{})
	out := h.waitView("not booked", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "Not booked")
	})
	if text := textOf(out.Blocks); !strings.Contains(text, "*Not booked:* Intro call with Ada Lovelace, today, 06:15–06:30 EDT.") {
		t.Errorf("the outcome does not say what was not booked:\n%s", text)
	}
	retry := elements(out.Blocks, "offer_retry")
	if len(retry) != 1 {
		t.Fatalf("no Try again:\n%s", out.Blocks)
	}
	h.interact(slacktest.BlockAction(grace, "offer_retry", str(retry[0], "value"), slacktest.InView(out)))
	h.waitView("the form again", func(v slacktest.View) bool { return v.ID == form.ID && len(elements(v.Blocks, "name")) == 1 })
}
