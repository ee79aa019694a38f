package bot

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/offer"
)

// An offer names at most maxOfferNamed people; one more is refused, saying
// so.
func TestOfferArgsNamedAtTheLimit(t *testing.T) {
	named := func(n int) string {
		var b strings.Builder
		b.WriteString("intro-call")
		for i := range n {
			fmt.Fprintf(&b, " <@U%08d|p%d>", i, i)
		}
		return b.String()
	}
	if a, problem := parseOfferArgs(named(maxOfferNamed)); problem != "" || len(a.named) != maxOfferNamed {
		t.Errorf("%d people: %d named, problem %q", maxOfferNamed, len(a.named), problem)
	}
	if _, problem := parseOfferArgs(named(maxOfferNamed + 1)); !strings.Contains(problem, fmt.Sprint(maxOfferNamed)) {
		t.Errorf("%d people: problem %q, want one naming the limit", maxOfferNamed+1, problem)
	}
}

// The card stays within Block Kit's limits in every state at the limits
// of what an offer holds: the most people named, the most meetings booked,
// the longest names and titles, all of them escaped.
func TestOfferCardAtTheLimits(t *testing.T) {
	now := goldenNow
	long := strings.Repeat("<&>", maxNameRunes) // clipped, then each character escaped
	o := offer.Offer{ID: "k33pbf2uufmb2i6n", Offerer: "U012ADA", Name: long, Max: maxOfferN,
		Event: "intro-call", Title: long, Minutes: 15, Created: now, Expires: now.Add(DefaultOfferTTL)}
	for i := range maxOfferNamed {
		o.For = append(o.For, fmt.Sprintf("W%010d", i))
	}
	start := goldenAt(23, 11, 15)
	for i := range maxOfferN {
		s := start.Add(time.Duration(i) * time.Hour)
		o.Uses = append(o.Uses, offer.Use{Key: fmt.Sprint("V", i), By: fmt.Sprintf("W%010d", i), Name: long,
			Start: s.UTC().Format(time.RFC3339), End: s.Add(15 * time.Minute).UTC(), At: now, Booking: strings.Repeat("b", 200)})
	}
	partly := o
	partly.Uses = partly.Uses[:maxOfferN-1]
	pending := o
	pending.Uses = append([]offer.Use(nil), o.Uses...)
	pending.Uses[0].Booking = ""
	withdrawn := partly
	withdrawn.Withdrawn = now
	expired := partly
	expired.Expires = now.Add(-time.Minute)
	slots := goldenSlots(t, "intro-call", 15, goldenAt(25, 9, 0), goldenAt(26, 16, 45))
	for name, c := range map[string]struct {
		o offer.Offer
		m message
	}{
		"booked":       {o, offerCard(o, nil, goldenBerlin, now)},
		"being booked": {pending, offerCard(pending, nil, goldenBerlin, now)},
		"partly":       {partly, offerCard(partly, slots, goldenBerlin, now)},
		"withdrawn":    {withdrawn, offerCard(withdrawn, nil, goldenBerlin, now)},
		"expired":      {expired, offerCard(expired, nil, goldenBerlin, now)},
	} {
		raw, err := json.Marshal(c.m.Blocks)
		if err != nil {
			t.Fatal(err)
		}
		var blocks []any
		if err := json.Unmarshal(raw, &blocks); err != nil {
			t.Fatal(err)
		}
		for _, e := range slacktest.ValidateMessage(c.m.Text, blocks) {
			t.Errorf("%s: %s", name, e)
		}
		// Nothing was cut at the 3000 characters of a text: every
		// booking is there or counted, and every token is whole.
		text := strings.Join(texts(blocks), "\n")
		shown, more := 0, 0
		for _, u := range c.o.Booked() {
			if strings.Contains(text, mention(u.By)) {
				shown++
			}
		}
		if m := moreRE.FindStringSubmatch(text); m != nil {
			more, _ = strconv.Atoi(m[1])
		}
		if n := len(c.o.Booked()); shown+more != n || shown < n/2 {
			t.Errorf("%s: %d bookings shown and %d counted, of %d", name, shown, more, n)
		}
		if rest := tokenRE.ReplaceAllString(text, ""); strings.ContainsAny(rest, "<>") {
			t.Errorf("%s: a token was cut: %q", name, rest)
		}
	}
}

// moreRE counts the bookings a card has no room for.
var moreRE = regexp.MustCompile(`and (\d+) more`)

// tokenRE is a date token or a mention, whole.
var tokenRE = regexp.MustCompile(`<(?:!date\^[^<>]*|@[UW][A-Z0-9]+)>`)

// texts are the text strings in decoded blocks.
func texts(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["text"].(string); ok {
			out = append(out, s)
		}
		for _, e := range x {
			out = append(out, texts(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, texts(e)...)
		}
	}
	return out
}
