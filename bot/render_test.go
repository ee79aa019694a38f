package bot

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/offer"
)

// Every date token's fallback names the token's own instant, in the zone
// the message was written for: a reader whose client cannot show tokens
// reads the same time.
func TestDateTokensAgreeWithTheirFallback(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	token := regexp.MustCompile(`<!date\^(\d+)\^([^|>]*)\|([^>]*)>`)
	start := time.Date(2026, 10, 24, 22, 30, 0, 0, time.UTC) // 00:30 CEST on the 25th
	for _, tc := range []struct {
		name     string
		got      string
		fallback string // the tokens' fallbacks read in a row
	}{
		{"span", span(start, start.Add(30*time.Minute), berlin), "Sun 25 Oct, 00:30–01:00 CEST"},
		{"span across the clock change", span(start.Add(2*time.Hour), start.Add(3*time.Hour), berlin), "Sun 25 Oct, 02:30 CEST–02:30 CET"},
		{"span across midnight", span(start.Add(-time.Hour), start.Add(time.Hour), berlin), "Sat 24 Oct, 23:30 – Sun 25 Oct, 01:30 CEST"},
		{"hours", hours(start, start.Add(15*time.Minute), berlin), "00:30–00:45 CEST"},
		{"hours across midnight", hours(start.Add(-time.Hour), start.Add(time.Hour), berlin), "23:30 – Sun 25 Oct, 01:30 CEST"},
		{"moment", moment(start, time.UTC), "Sat 24 Oct, 22:30 UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := token.ReplaceAllString(tc.got, "$3"); got != tc.fallback {
				t.Errorf("fallback %q, want %q", got, tc.fallback)
			}
			loc := berlin
			if tc.name == "moment" {
				loc = time.UTC
			}
			for _, m := range token.FindAllStringSubmatch(tc.got, -1) {
				sec, _ := strconv.ParseInt(m[1], 10, 64)
				at := time.Unix(sec, 0).In(loc)
				if !strings.Contains(m[3], at.Format("15:04")) {
					t.Errorf("token at %s has fallback %q", at, m[3])
				}
				if strings.Contains(m[2], "{date") != strings.Contains(m[3], at.Format("Mon 2 Jan")) {
					t.Errorf("token format %q names a day, fallback %q does not (or the other way)", m[2], m[3])
				}
			}
		})
	}
	if got := localSpan(start.Add(2*time.Hour), start.Add(3*time.Hour), berlin); got != "Sun 25 Oct, 02:30 CEST–02:30 CET" {
		t.Errorf("localSpan = %q", got)
	}
}

// A backtick in data shown as code cannot end the code span, and the rest
// is escaped like any data.
func TestCode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"bk_123":            "`bk_123`",
		"bk_`tick`_<!here>": "`bk_ˋtickˋ_&lt;!here&gt;`",
		"a & b\nc":          "`a &amp; b c`",
		"```<!channel>```":  "`ˋˋˋ&lt;!channel&gt;ˋˋˋ`",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
}

// People are listed one way wherever bookbot names several: whom an offer
// is for, who may book the card just posted, who shares a calendar.
func TestPeopleAreListedOneWay(t *testing.T) {
	t.Parallel()
	ids := []string{"UA", "UB", "UC"}
	want := "<@UA>, <@UB> and <@UC>"
	for what, got := range map[string]string{
		"an offer's people":         offerCard(offer.Offer{For: ids, Max: 1, Expires: time.Now().Add(time.Hour)}, nil, time.UTC, time.Now()).Text,
		"a posted card's people":    composePostedMessage("Intro call", ids).Blocks[0].(*slack.SectionBlock).Text.Text,
		"a calendar's other people": connectedMessage(1, false, ids, "").Text,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q, want them as %q", what, got, want)
		}
	}
}

// A zone is named with its abbreviation, and with the change when the
// clocks change among the times it is named for.
func TestZoneName(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	march := time.Date(2026, 3, 23, 9, 0, 0, 0, berlin)
	change := time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		loc      *time.Location
		from, to time.Time
		want     string
	}{
		{"one moment", berlin, march, march, "Europe/Berlin (CET)"},
		{"no change", berlin, march, march.AddDate(0, 0, 5), "Europe/Berlin (CET)"},
		{"one change", berlin, march, march.AddDate(0, 0, 10), "Europe/Berlin (CET, then CEST from Sun 29 Mar)"},
		{"ending at the change", berlin, march, change, "Europe/Berlin (CET, then CEST from Sun 29 Mar)"},
		{"ending just before it", berlin, march, change.Add(-time.Second), "Europe/Berlin (CET)"},
		{"there and back", berlin, march, march.AddDate(0, 8, 0), "Europe/Berlin (CET, then CEST from Sun 29 Mar, then CET from Sun 25 Oct)"},
		{"more changes", berlin, march, march.AddDate(2, 0, 0), "Europe/Berlin"},
		{"UTC", time.UTC, march, march.AddDate(1, 0, 0), "UTC"},
	} {
		if got := zoneName(tc.loc, tc.from, tc.to); got != tc.want {
			t.Errorf("%s: zoneName = %q, want %q", tc.name, got, tc.want)
		}
	}
}
