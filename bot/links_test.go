package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/store/bolt"
)

const page = "https://book.example.com/ada"

// linkHarness is the offer harness with the owner's booking page set, its
// domain among the app's unfurl domains, and bookbot in the team channel.
func linkHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, func(h *harness, c *bot.Config) {
		db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
		if err != nil {
			t.Fatal(err)
		}
		c.Offers, c.Outbox, c.BookingPage = db.Offers(), db.Outbox(), page
	})
	h.sl.SetUnfurlDomains("example.com")
	h.sl.AddUser(slacktest.User{ID: grace, Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, grace, eve, bob, h.sl.BotUserID()}})
	return h
}

// say posts text as user in the team channel.
func (h *harness) say(user, text string) slacktest.Message {
	h.t.Helper()
	m, err := h.sl.Say(h.ctx(), user, "C0TEAM", text)
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

// unfurled waits for link's unfurl in m to be one match accepts.
func (h *harness) unfurled(m slacktest.Message, link string, match func(slacktest.Message) bool) slacktest.Message {
	h.t.Helper()
	u, err := h.sl.WaitUnfurl(h.ctx(), m, link, match)
	if err != nil {
		got, _ := h.sl.Unfurl(m, link)
		h.t.Fatalf("no unfurl of %s as wanted: %v\nit is: %s\n%s\nthe bot's log:\n%s", link, err, got.Text, textOf(got.Blocks), h.logs)
	}
	return u
}

// A link to an event type of the owner's page unfurls into a card of its
// free times: Grace, not on the allow-list, books one for herself with one
// POST, a second click of hers books nothing, Eve books another; the card
// shows each booking, and nobody but bookbot can withdraw it.
func TestLinkUnfurlsIntoACardAnyoneBooksFrom(t *testing.T) {
	t.Parallel()
	h := linkHarness(t)
	link := page + "/intro-call?utm=slack"
	msg := h.say(grace, "Book me: <"+link+">")
	card := h.unfurled(msg, link, nil)
	times := values(elements(card.Blocks, "offer_slot"))
	if len(times) == 0 || !strings.HasPrefix(card.Text, "Offer") || len(elements(card.Blocks, "offer_withdraw")) != 0 {
		t.Fatalf("the card %q:\n%s", card.Text, textOf(card.Blocks))
	}
	for _, c := range h.sl.Calls() {
		if c.Method == "chat.unfurl" && c.Form.Get("unfurl_id") != "" {
			t.Error("a link still in the composer was unfurled")
		}
	}

	h.interact(slacktest.BlockAction(grace, "offer_slot", times[0], slacktest.InUnfurl(card)))
	form := h.waitView("the offer's form", func(v slacktest.View) bool {
		return v.TriggerUser == grace && v.CallbackID == "offer_book"
	})
	h.submit(grace, form.ID, map[string]string{})
	h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(string(v.Blocks), "Booked")
	})
	h.unfurled(msg, link, func(u slacktest.Message) bool { return strings.Contains(textOf(u.Blocks), "Booked so far") })
	posts := h.requests("POST /bookings")
	if len(posts) != 1 || posts[0].Form.Get("email") != "grace@example.com" || posts[0].Form.Get("booker_tz") != "America/New_York" {
		t.Fatalf("POST /bookings: %+v", posts)
	}

	// Grace again: one time a person.
	card, _ = h.sl.Unfurl(msg, link)
	times = values(elements(card.Blocks, "offer_slot"))
	h.interact(slacktest.BlockAction(grace, "offer_slot", times[0], slacktest.InUnfurl(card)))
	h.reply(grace, "You already booked a meeting from this offer")

	h.interact(slacktest.BlockAction(eve, "offer_slot", times[0], slacktest.InUnfurl(card)))
	eveForm := h.waitView("Eve's form", func(v slacktest.View) bool {
		return v.TriggerUser == eve && v.CallbackID == "offer_book"
	})
	h.submit(eve, eveForm.ID, map[string]string{"name": "Eve Mallory", "email": "eve@example.com"})
	h.waitView("Eve's outcome", func(v slacktest.View) bool {
		return v.ID == eveForm.ID && strings.Contains(string(v.Blocks), "Booked")
	})
	if n := len(h.requests("POST /bookings")); n != 2 {
		t.Errorf("%d POST /bookings, want 2", n)
	}
	h.drain()
	for _, m := range h.sl.Messages() {
		if m.Kind == "message" && m.Channel == ada {
			t.Errorf("Ada, who made no offer, got %q", m.Text)
		}
	}
}

// Links to anything but an event type the page has and the API books are
// left alone, or answered with a short card and no buttons.
func TestLinksOutsideThePageOrToUnknownTypes(t *testing.T) {
	t.Parallel()
	h := linkHarness(t)
	other := "https://other.example.com/ada/intro-call"
	root := page + "/"
	unknown := page + "/no-such-type"
	team := page + "/team-sync"
	msg := h.say(grace, "<"+other+"> <"+root+"> <"+unknown+"> <"+team+">")
	u := h.unfurled(msg, unknown, nil)
	if len(elements(u.Blocks, "offer_slot")) != 0 || !strings.Contains(textOf(u.Blocks), "names no event type") || !strings.Contains(string(u.Blocks), unknown) {
		t.Errorf("an unknown event type's card:\n%s", u.Blocks)
	}
	u = h.unfurled(msg, team, nil)
	if len(elements(u.Blocks, "offer_slot")) != 0 || !strings.Contains(textOf(u.Blocks), "round robin") {
		t.Errorf("a round robin event type's card:\n%s", u.Blocks)
	}
	for _, left := range []string{other, root} {
		if _, ok := h.sl.Unfurl(msg, left); ok {
			t.Errorf("%s was unfurled", left)
		}
	}
	if n := len(h.requests("GET /slots")); n != 0 {
		t.Errorf("%d GET /slots for links that offer nothing", n)
	}
}

// A person who connects their calendar may give their own booking page:
// links to it unfurl into their calendar's free times, booked there, and
// they hear of each booking; nobody else may claim the page.
func TestLinkToAPersonsOwnPage(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	h.sl.SetUnfurlDomains("example.com")
	h.sl.AddUser(slacktest.User{ID: grace, Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, grace, bob, h.sl.BotUserID()}})
	adaPage := "https://cal.example.com/ada-own"
	connect := func(user, key, page string) slacktest.Ack {
		t.Helper()
		h.slash(user, "connect")
		v := h.waitView("the connect form", func(v slacktest.View) bool {
			return v.TriggerUser == user && v.CallbackID == "account_connect" && !v.Closed
		})
		return h.submit(user, v.ID, map[string]string{"api_key": key, "booking_page": page})
	}
	if ack := connect(ada, adaKey, "cal.example.com/ada-own"); !strings.Contains(string(ack.Payload), "whole address") {
		t.Errorf("a page without its scheme: %s", ack.Payload)
	}
	if ack := connect(ada, adaKey, adaPage+"/"); len(ack.Payload) > 0 && strings.Contains(string(ack.Payload), "errors") {
		t.Fatalf("connect: %s", ack.Payload)
	}
	h.dm(ada, "your booking page")
	// Bob, on a calendar of his own, may not claim her page; kiri, who
	// connected the same key as she did, acts on her calendar and may.
	const bobsKey = "sandbox_bob_own_key_1a2b3c"
	h.sb.AddOwner(bobsKey, "owner-bob", berlin, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))
	if ack := connect(bob, bobsKey, adaPage); !strings.Contains(string(ack.Payload), "Someone else connected this booking page") {
		t.Errorf("Bob claimed Ada's page: %s", ack.Payload)
	}
	if ack := connect(kiw, adaKey, adaPage); strings.Contains(string(ack.Payload), "errors") {
		t.Errorf("kiri, on Ada's calendar, could not name its page: %s", ack.Payload)
	}

	link := adaPage + "/intro-call"
	msg := h.say(grace, "<"+link+">")
	card := h.unfurled(msg, link, nil)
	if txt := textOf(card.Blocks); !strings.Contains(txt, "Ada's intro") || !strings.Contains(txt, "with *Ada Lovelace*") || len(elements(card.Blocks, "offer_withdraw")) != 1 {
		t.Fatalf("the card of Ada's page:\n%s", txt)
	}
	h.interact(slacktest.BlockAction(grace, "offer_slot", values(elements(card.Blocks, "offer_slot"))[0], slacktest.InUnfurl(card)))
	form := h.waitView("Grace's form", func(v slacktest.View) bool { return v.TriggerUser == grace && v.CallbackID == "offer_book" })
	h.submit(grace, form.ID, map[string]string{})
	h.dm(ada, "Booked from your offer")
	posts := h.requests("POST /bookings")
	if len(posts) != 1 || posts[0].Owner != adaOwner {
		t.Errorf("POST /bookings %+v, want one on Ada's own calendar", posts)
	}
}

// A booking page is the first namer's: bookbot cannot tell whose it is.
// Bob names Ada's page, and Ada is refused it; he frees it by connecting
// again with no page, or by disconnecting, and then she may name it.
func TestAClaimedBookingPageIsFreedByWhoeverClaimedIt(t *testing.T) {
	t.Parallel()
	for _, free := range []string{"connect again without it", "disconnect"} {
		t.Run(free, func(t *testing.T) {
			t.Parallel()
			var own ownCalendars
			h := newHarness(t, withOwnCalendars(&own))
			const bobsKey, adaPage = "sandbox_bob_own_key_1a2b3c", "https://cal.example.com/ada-own"
			h.sb.AddOwner(bobsKey, "owner-bob", berlin, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))
			connect := func(user, key, page string) string {
				t.Helper()
				h.slash(user, "connect")
				v := h.waitView("the connect form", func(v slacktest.View) bool {
					return v.TriggerUser == user && v.CallbackID == "account_connect" && !v.Closed
				})
				return string(h.submit(user, v.ID, map[string]string{"api_key": key, "booking_page": page}).Payload)
			}
			if ack := connect(bob, bobsKey, adaPage); strings.Contains(ack, "errors") {
				t.Fatalf("bob's connect: %s", ack)
			}
			if ack := connect(ada, adaKey, adaPage); !strings.Contains(ack, "Someone else connected this booking page") {
				t.Fatalf("Ada was given the page bob named: %s", ack)
			}
			if free == "disconnect" {
				h.slash(bob, "disconnect")
				h.reply(bob, "Disconnected")
			} else if ack := connect(bob, bobsKey, ""); strings.Contains(ack, "errors") {
				t.Fatalf("bob's connect again: %s", ack)
			}
			if ack := connect(ada, adaKey, adaPage); strings.Contains(ack, "errors") {
				t.Errorf("Ada could not name her page once bob freed it: %s", ack)
			}
		})
	}
}
