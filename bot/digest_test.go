package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/outbox"
)

var digestTestZone = func() *time.Location {
	z, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return z
}()

// digestTestDay is Tuesday 2026-11-24 in Berlin.
var digestTestDay = time.Date(2026, 11, 24, 0, 0, 0, 0, digestTestZone)

var digestTestTypes = []booking.EventType{
	{Slug: "intro-call", Title: "Intro call", DurationMinutes: 15, SchedulingKind: booking.KindSolo},
	{Slug: "consultation", Title: "Consultation", DurationMinutes: 30, SchedulingKind: booking.KindSolo},
}

// digestTestDigest is a day of n bookings every 5 minutes from 08:00, made
// by name(i) (nil: "Attendee NNN").
func digestTestDigest(n int, name func(i int) string, email func(i int) string) digest.Digest {
	var list []booking.Booking
	for i := range n {
		start := digestTestDay.Add(8*time.Hour + time.Duration(i)*5*time.Minute).UTC()
		b := booking.Booking{
			ID: fmt.Sprintf("bk_%03d", i), Start: start, End: start.Add(30 * time.Minute), Status: "confirmed",
			EventType:   booking.Some("consultation"),
			BookerName:  booking.Some(fmt.Sprintf("Attendee %03d", i)),
			BookerEmail: booking.Some(fmt.Sprintf("attendee%03d@example.com", i)),
		}
		if name != nil {
			b.BookerName = booking.Some(name(i))
		}
		if email != nil {
			b.BookerEmail = booking.Some(email(i))
		}
		list = append(list, b)
	}
	return digest.Build(list, digestTestTypes, digestTestDay, digestTestZone)
}

var digestTokenRE = regexp.MustCompile(`<!date\^(\d+)\^[^|>]*\{time\}[^|>]*\|([^<>|]+)>`)

// digestCheckLimits fails t when a message breaks a Block Kit limit, or
// holds a '<' or '>' that is not part of a date token.
func digestCheckLimits(t *testing.T, msgs []DigestMessage) {
	t.Helper()
	if len(msgs) == 0 {
		t.Fatal("no messages")
	}
	for i, m := range msgs {
		if n := len(m.Blocks); n == 0 || n > 50 {
			t.Errorf("message %d: %d blocks", i, n)
		}
		if m.Text == "" || strings.ContainsAny(m.Text, "<>") {
			t.Errorf("message %d: fallback text empty or unescaped: %q", i, digestHead(m.Text))
		}
		raw, err := json.Marshal(m.Blocks)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		var blocks []struct {
			Type string `json:"type"`
			Text *struct {
				Type, Text string
				Verbatim   bool
			} `json:"text"`
			Elements []struct{ Type, Text string } `json:"elements"`
			Fields   []any                         `json:"fields"`
		}
		if err := json.Unmarshal(raw, &blocks); err != nil {
			t.Fatal(err)
		}
		total := 0
		for j, b := range blocks {
			where := fmt.Sprintf("message %d block %d (%s)", i, j, b.Type)
			switch b.Type {
			case "header":
				if b.Text == nil || b.Text.Type != "plain_text" || b.Text.Text == "" || digestChars(b.Text.Text) > 150 {
					t.Errorf("%s: bad header %+v", where, b.Text)
				}
				if j != 0 {
					t.Errorf("%s: header not first", where)
				}
				total += len(b.Text.Text)
			case "section":
				if b.Text == nil || b.Text.Text == "" || len(b.Text.Text) > 3000 || digestChars(b.Text.Text) > 3000 {
					t.Errorf("%s: section text of %d bytes", where, len(b.Text.Text))
					continue
				}
				if !b.Text.Verbatim {
					t.Errorf("%s: section is not verbatim", where)
				}
				if len(b.Fields) > 10 {
					t.Errorf("%s: %d fields", where, len(b.Fields))
				}
				if rest := digestTokenRE.ReplaceAllString(b.Text.Text, ""); strings.ContainsAny(rest, "<>") {
					t.Errorf("%s: unescaped markup: %q", where, digestHead(rest))
				}
				total += len(b.Text.Text)
			case "context":
				if n := len(b.Elements); n == 0 || n > 10 {
					t.Errorf("%s: %d elements", where, n)
				}
				for _, e := range b.Elements {
					if e.Text == "" || len(e.Text) > 3000 || strings.ContainsAny(e.Text, "<>") {
						t.Errorf("%s: element %q", where, digestHead(e.Text))
					}
					total += len(e.Text)
				}
			default:
				t.Errorf("%s: unexpected block type", where)
			}
		}
		if total > 12000 {
			t.Errorf("message %d: %d chars of block text in all; Slack answers msg_blocks_too_long", i, total)
		}
	}
}

// digestChars counts UTF-16 code units, the most a JavaScript-based limit
// could count.
func digestChars(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

func digestHead(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// digestSections returns the text of every section of every message.
func digestSections(msgs []DigestMessage) []string {
	var out []string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if s, ok := b.(*slack.SectionBlock); ok && s.Text != nil {
				out = append(out, s.Text.Text)
			}
		}
	}
	return out
}

func digestAllText(t *testing.T, msgs []DigestMessage) string {
	t.Helper()
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestDigestMessagesFullDay(t *testing.T) {
	t.Parallel()
	d := digestTestDigest(booking.MaxListed, nil, nil)
	for _, emails := range []bool{false, true} {
		msgs := DigestMessages(d, emails)
		digestCheckLimits(t, msgs)

		// Every entry appears once, in order, with its own time tokens
		// under the header that names the day.
		lines := strings.Split(strings.Join(digestSections(msgs), "\n"), "\n")
		if len(lines) != len(d.Entries) {
			t.Fatalf("emails=%v: %d lines for %d entries", emails, len(lines), len(d.Entries))
		}
		for i, line := range lines {
			e := d.Entries[i]
			if !strings.Contains(line, fmt.Sprintf("Attendee %03d", i)) || !strings.HasPrefix(line, "*"+hours(e.Start, e.End, d.Zone)+"*  ") {
				t.Errorf("line %d = %q", i, line)
			}
			toks := digestTokenRE.FindAllStringSubmatch(line, -1)
			if len(toks) != 2 || toks[0][1] != strconv.FormatInt(e.Start.Unix(), 10) || toks[1][1] != strconv.FormatInt(e.End.Unix(), 10) {
				t.Errorf("line %d tokens = %q", i, toks)
			}
			if has := strings.Contains(line, "@example.com"); has != emails {
				t.Errorf("emails=%v: line %d = %q", emails, i, line)
			}
		}
	}
	msgs := DigestMessages(d, false)
	header := msgs[0].Blocks[0].(*slack.HeaderBlock).Text.Text
	if !strings.HasPrefix(header, "Bookings, Tue 24 Nov") {
		t.Errorf("header = %q", header)
	}
	if ctx := digestAllText(t, msgs[:1]); !strings.Contains(ctx, "*100 bookings*") {
		t.Error("no count in the context line")
	}
	if strings.Contains(digestAllText(t, msgs), "@example.com") {
		t.Error("an email shown without includeEmails")
	}
	// A lock screen shows the day and the count, not the whole day.
	if !strings.HasPrefix(msgs[0].Text, "Digest for Tue 24 Nov: 100 bookings.") {
		t.Errorf("fallback text = %q", digestHead(msgs[0].Text))
	}
}

// The channel's message shows the first digestRows bookings and says how
// many more its thread has, and which; each message of the thread says
// which of the day's bookings it holds, and the numbers add up to the day.
func TestDigestMessagesCapTheChannelsMessage(t *testing.T) {
	t.Parallel()
	for _, n := range []int{digestRows, digestRows + 1, 40, booking.MaxListed} {
		msgs := DigestMessages(digestTestDigest(n, nil, nil), false)
		digestCheckLimits(t, msgs)
		first := len(strings.Split(strings.Join(digestSections(msgs[:1]), "\n"), "\n"))
		if first != min(n, digestRows) {
			t.Errorf("%d bookings: the channel's message shows %d, want %d", n, first, min(n, digestRows))
		}
		more := regexp.MustCompile(`\*(\d+) more\* in the thread: the day's bookings (\d+) to (\d+)\.`).FindStringSubmatch(digestAllText(t, msgs[:1]))
		switch {
		case n <= digestRows && (more != nil || len(msgs) != 1):
			t.Errorf("%d bookings: %d messages, more %q; want one, and no thread", n, len(msgs), more)
			continue
		case n <= digestRows:
			continue
		case more == nil || atoi(more[1]) != n-digestRows || atoi(more[2]) != digestRows+1 || atoi(more[3]) != n:
			t.Errorf("%d bookings: more %q", n, more)
		}
		from := digestRows + 1
		for i, m := range msgs[1:] {
			rows := len(strings.Split(strings.Join(digestSections([]DigestMessage{m}), "\n"), "\n"))
			which := fmt.Sprintf("%d–%d of %d", from, from+rows-1, n)
			if h := m.Blocks[0].(*slack.HeaderBlock).Text.Text; !strings.HasSuffix(h, ": "+which) || !strings.Contains(m.Text, "bookings "+which) {
				t.Errorf("%d bookings: thread message %d is headed %q (%q), want %s", n, i+1, h, m.Text, which)
			}
			from += rows
		}
		if from != n+1 {
			t.Errorf("%d bookings: the thread holds up to the %dth", n, from-1)
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestDigestMessagesWorstCaseSplits(t *testing.T) {
	t.Parallel()
	// Names and emails as long as the API might send, every character
	// needing escaping: each entry fills most of a section.
	d := digestTestDigest(booking.MaxListed,
		func(i int) string { return fmt.Sprintf("%03d", i) + strings.Repeat("&<>", 400) },
		func(i int) string { return strings.Repeat("&", 600) + "@example.com" })
	msgs := DigestMessages(d, true)
	digestCheckLimits(t, msgs)
	if len(msgs) < 2 {
		t.Fatalf("%d messages; the worst case needs several", len(msgs))
	}
	seen := 0
	for i, m := range msgs {
		header := m.Blocks[0].(*slack.HeaderBlock).Text.Text
		if want := fmt.Sprintf(": %d–", seen+1); i > 0 && !strings.Contains(header, want) {
			t.Errorf("message %d header %q lacks %s", i, header, want)
		}
		for _, s := range digestSections([]DigestMessage{m}) {
			for line := range strings.SplitSeq(s, "\n") {
				if !strings.Contains(line, fmt.Sprintf("· %03d&amp;", seen)) {
					t.Errorf("entry %d missing or out of order: %q", seen, digestHead(line))
				}
				seen++
			}
		}
	}
	if seen != len(d.Entries) {
		t.Errorf("%d entries rendered of %d", seen, len(d.Entries))
	}
}

func TestDigestMessagesManyEmojiNames(t *testing.T) {
	t.Parallel()
	// Four-byte characters: limits hold by bytes and by UTF-16 units.
	d := digestTestDigest(booking.MaxListed, func(i int) string { return strings.Repeat("🎉", 200) }, nil)
	digestCheckLimits(t, DigestMessages(d, true))
}

func TestDigestMessagesEscaping(t *testing.T) {
	t.Parallel()
	evil := []string{"<!channel>", "<!here|here>", "<@U0ADMIN>", "@here", "a & b <script>", "<https://evil.example|click>", "<!date^1^{time}|x>"}
	d := digestTestDigest(len(evil), func(i int) string { return evil[i] }, func(i int) string { return "<mailto:x@evil.example|" + evil[i] + ">" })
	msgs := DigestMessages(d, true)
	digestCheckLimits(t, msgs)
	all := strings.Join(digestSections(msgs), "\n")
	for _, bad := range []string{"<!channel>", "<!here", "<@U0ADMIN>", "<script>", "<https://", "<mailto:", "<!date^1^"} {
		if strings.Contains(all, bad) {
			t.Errorf("sections contain %q", bad)
		}
		if strings.Contains(msgs[0].Text, bad) {
			t.Errorf("fallback text contains %q", bad)
		}
	}
	for _, want := range []string{"&lt;!channel&gt;", "a &amp; b &lt;script&gt;", "&lt;@U0ADMIN&gt;"} {
		if !strings.Contains(all, want) {
			t.Errorf("sections lack %q", want)
		}
	}
}

func TestDigestMessagesNullsEmptyAndWarning(t *testing.T) {
	t.Parallel()
	start := digestTestDay.Add(9 * time.Hour)
	legacy := booking.Booking{ID: "bk_legacy", Start: start, End: start.Add(30 * time.Minute)}
	d := digest.Build([]booking.Booking{legacy}, digestTestTypes, digestTestDay, digestTestZone)
	msgs := DigestMessages(d, true)
	digestCheckLimits(t, msgs)
	line := digestSections(msgs)[0]
	if !strings.Contains(line, "_no event or attendee on record_") {
		t.Errorf("legacy line = %q", line)
	}

	empty := digest.Build(nil, nil, digestTestDay, digestTestZone)
	msgs = DigestMessages(empty, false)
	digestCheckLimits(t, msgs)
	if len(msgs) != 1 || len(msgs[0].Blocks) != 1 || !strings.Contains(digestAllText(t, msgs), "No bookings tomorrow, Tue 24 Nov") {
		t.Errorf("empty day = %s", digestAllText(t, msgs))
	}

	full := digestTestDigest(5, nil, nil)
	full.MaybeIncomplete = true
	msgs = DigestMessages(full, false)
	digestCheckLimits(t, msgs)
	ctx := msgs[0].Blocks[1].(*slack.ContextBlock)
	if len(ctx.ContextElements.Elements) != 2 || !strings.Contains(digestAllText(t, msgs), "may be missing") {
		t.Errorf("no warning: %s", digestAllText(t, msgs[:1]))
	}
	if !strings.Contains(msgs[0].Text, "may be missing") {
		t.Error("no warning in the fallback text")
	}

	// A full list whose bookings all start before the day: nothing to
	// show, and the day may still have some beyond the list.
	unknown := digestTestDigest(0, nil, nil)
	unknown.MaybeIncomplete = true
	msgs = DigestMessages(unknown, false)
	digestCheckLimits(t, msgs)
	if len(msgs) != 1 || !strings.Contains(digestAllText(t, msgs), "may be missing") || !strings.Contains(msgs[0].Text, "0 bookings") {
		t.Errorf("a day with none listed, and maybe some beyond the list: %s (%q)", digestAllText(t, msgs), msgs[0].Text)
	}
}

func TestDigestMessagesClockChange(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 10, 25, 0, 0, 0, 0, digestTestZone)
	first := time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC) // 02:30 CEST
	second := first.Add(time.Hour)                          // 02:30 CET
	d := digest.Build([]booking.Booking{
		{ID: "a", Start: first, End: first.Add(30 * time.Minute), EventType: booking.Some("intro-call"), BookerName: booking.Some("A")},
		{ID: "b", Start: second, End: second.Add(30 * time.Minute), EventType: booking.Some("intro-call"), BookerName: booking.Some("B")},
	}, digestTestTypes, day, digestTestZone)
	msgs := DigestMessages(d, false)
	digestCheckLimits(t, msgs)
	all := digestTokenRE.ReplaceAllString(strings.Join(digestSections(msgs), "\n"), "$2")
	if !strings.Contains(all, "*02:30 CEST–02:00 CET*") || !strings.Contains(all, "*02:30–03:00 CET*") {
		t.Errorf("sections = %q", all)
	}
	if !strings.Contains(digestAllText(t, msgs), "the clocks change on this day") {
		t.Error("clock change not mentioned")
	}
}

func TestDigestCut(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abc &amp; def", 8, "abc …"},       // would split the entity
		{"abc &amp; def", 12, "abc &amp;…"}, // keeps the whole entity
		{"ééééé", 7, "éé…"},                 // never splits a character
	} {
		got := cut(tt.s, tt.n)
		if got != tt.want || len(got) > tt.n || !utf8.ValidString(got) {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// digestSlackServer is a chat.postMessage endpoint over real HTTP.
type digestSlackServer struct {
	mu      sync.Mutex
	posts   []url.Values
	answers []func(w http.ResponseWriter) // one per call; then ok
}

func newDigestSlack(t *testing.T) (*digestSlackServer, *slack.Client) {
	t.Helper()
	s := &digestSlackServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		if r.URL.Path != "/chat.postMessage" || form.Get("token") != "xoxb-test" {
			t.Errorf("unexpected call %s %s", r.Method, r.URL.Path)
		}
		s.mu.Lock()
		var answer func(http.ResponseWriter)
		if len(s.answers) > 0 {
			answer, s.answers = s.answers[0], s.answers[1:]
		}
		s.mu.Unlock()
		if answer != nil {
			answer(w)
			return
		}
		s.mu.Lock()
		s.posts = append(s.posts, form)
		n := len(s.posts)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":"1763917203.%06d"}`, form.Get("channel"), n)
	}))
	t.Cleanup(srv.Close)
	return s, slack.New("xoxb-test", slack.OptionAPIURL(srv.URL+"/"))
}

func (s *digestSlackServer) fail(answers ...func(w http.ResponseWriter)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, answers...)
}

func (s *digestSlackServer) Posts() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.posts...)
}

func digestSlackError(code string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok":false,"error":%q}`, code)
	}
}

func digestSlackStatus(status int, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
	}
}

func TestSlackDigestPublisherPosts(t *testing.T) {
	t.Parallel()
	srv, api := newDigestSlack(t)
	var waits []time.Duration
	p := SlackDigestPublisher{Slack: api, sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	srv.fail(digestSlackStatus(http.StatusTooManyRequests, "2")) // the first try is rate limited

	d := digestTestDigest(3, nil, nil)
	ts, err := p.PublishDigestTS(t.Context(), "C0DIGEST", d, false)
	if err != nil {
		t.Fatal(err)
	}
	if ts != "1763917203.000001" || len(waits) != 1 || waits[0] != 2*time.Second {
		t.Errorf("ts %q, waits %v", ts, waits)
	}
	posts := srv.Posts()
	if len(posts) != 1 {
		t.Fatalf("%d posts", len(posts))
	}
	f := posts[0]
	if f.Get("channel") != "C0DIGEST" || f.Get("unfurl_links") != "false" || f.Get("unfurl_media") != "false" {
		t.Errorf("form = %v", f)
	}
	if f.Get("text") != "Digest for Tue 24 Nov: 3 bookings." {
		t.Errorf("text = %q", f.Get("text"))
	}
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(f.Get("blocks")), &blocks); err != nil || len(blocks) != 3 {
		t.Fatalf("blocks %s: %v", f.Get("blocks"), err)
	}
	if !digestTokenRE.MatchString(blocks[2]["text"].(map[string]any)["text"].(string)) {
		t.Error("no date tokens in the posted blocks")
	}
}

// A long day: the first message in the channel, with the day in its
// metadata; the rest in its thread.
func TestSlackDigestPublisherPostsTheRestInTheThread(t *testing.T) {
	t.Parallel()
	srv, api := newDigestSlack(t)
	p := SlackDigestPublisher{Slack: api}
	ts, err := p.PublishDigestTS(t.Context(), "C0DIGEST", digestTestDigest(40, nil, nil), false)
	if err != nil {
		t.Fatal(err)
	}
	posts := srv.Posts()
	if len(posts) < 2 {
		t.Fatalf("%d posts for 40 bookings, want the channel's and its thread's", len(posts))
	}
	if posts[0].Get("thread_ts") != "" || !strings.Contains(posts[0].Get("metadata"), `"bookbot_digest"`) {
		t.Errorf("the first post: %v", posts[0])
	}
	for i, f := range posts[1:] {
		if f.Get("thread_ts") != ts || f.Get("channel") != "C0DIGEST" || f.Get("metadata") != "" {
			t.Errorf("post %d: thread %q, channel %q, metadata %q; want the first's thread %s", i+2, f.Get("thread_ts"), f.Get("channel"), f.Get("metadata"), ts)
		}
	}
}

func TestSlackDigestPublisherFailures(t *testing.T) {
	t.Parallel()
	noWait := func(context.Context, time.Duration) error { return nil }
	big := digestTestDigest(booking.MaxListed,
		func(i int) string { return fmt.Sprintf("%03d", i) + strings.Repeat("&", 600) },
		func(i int) string { return strings.Repeat("&", 600) + "@example.com" })
	if n := len(DigestMessages(big, true)); n < 2 {
		t.Fatalf("big digest is %d messages", n)
	}
	tests := []struct {
		name      string
		d         digest.Digest
		answers   []func(http.ResponseWriter)
		maybe     bool // ErrMaybePosted expected
		wantPosts int
	}{
		{"refused", digestTestDigest(2, nil, nil), []func(http.ResponseWriter){digestSlackError("channel_not_found")}, false, 0},
		{"rate limited throughout", digestTestDigest(2, nil, nil), []func(http.ResponseWriter){
			digestSlackStatus(429, "1"), digestSlackStatus(429, "1"), digestSlackStatus(429, "1")}, false, 0},
		{"server error: unknown", digestTestDigest(2, nil, nil), []func(http.ResponseWriter){digestSlackStatus(500, "")}, true, 0},
		{"second message refused", big, []func(http.ResponseWriter){nil, digestSlackError("msg_too_long")}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, api := newDigestSlack(t)
			srv.fail(tt.answers...)
			p := SlackDigestPublisher{Slack: api, sleep: noWait}
			err := p.PublishDigest(t.Context(), "C0DIGEST", tt.d, true)
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, digest.ErrMaybePosted); got != tt.maybe {
				t.Errorf("ErrMaybePosted = %v, want %v: %v", got, tt.maybe, err)
			}
			if n := len(srv.Posts()); n != tt.wantPosts {
				t.Errorf("%d posts, want %d", n, tt.wantPosts)
			}
		})
	}
}

func TestSlackDigestPublisherFailureNotice(t *testing.T) {
	t.Parallel()
	srv, api := newDigestSlack(t)
	p := SlackDigestPublisher{Slack: api}
	if err := p.PublishFailure(t.Context(), "C0DIGEST", digestTestDay, digestTestZone, "the booking API is <unavailable>"); err != nil {
		t.Fatal(err)
	}
	f := srv.Posts()[0]
	var blocks []struct{ Text struct{ Text string } }
	if err := json.Unmarshal([]byte(f.Get("blocks")), &blocks); err != nil || len(blocks) != 1 {
		t.Fatalf("blocks %s: %v", f.Get("blocks"), err)
	}
	for _, s := range []string{f.Get("text"), blocks[0].Text.Text} {
		if !strings.Contains(s, "Tuesday, 24 November 2026 (Europe/Berlin)") || !strings.Contains(s, "&lt;unavailable&gt;") || strings.Contains(s, "<unavailable>") {
			t.Errorf("notice = %s", s)
		}
	}
	srv.fail(digestSlackError("not_in_channel"))
	if err := p.PublishFailure(t.Context(), "C0DIGEST", digestTestDay, digestTestZone, "x"); err == nil || errors.Is(err, digest.ErrMaybePosted) {
		t.Errorf("refused notice: %v", err)
	}
}

// A digest's first message carries its date, by which SlackFinder finds it
// in the channel's history under the date's key; another date's digest is
// not found there.
func TestFindDigest(t *testing.T) {
	t.Parallel()
	sl := slacktest.NewServer(t)
	sl.AddChannel(slacktest.Channel{ID: "C0DIGEST", Name: "digest", Members: []string{sl.BotUserID()}})
	api := slack.New(sl.BotToken(), slack.OptionAPIURL(sl.APIURL))
	p, f := SlackDigestPublisher{Slack: api}, SlackFinder{Slack: api}
	since := time.Now().Add(-time.Minute)
	d := digestTestDigest(2, nil, nil)
	posted, err := p.PublishDigestTS(t.Context(), "C0DIGEST", d, false)
	if err != nil {
		t.Fatal(err)
	}
	key, next := digest.Key(d.Date), digest.Key(d.Date.AddDate(0, 0, 1))
	found, err := f.Find(t.Context(), "C0DIGEST", nil, []string{key, next}, since)
	if err != nil || len(found) != 1 || found[key] != (outbox.Found{Message: outbox.Message{Channel: "C0DIGEST", TS: posted}}) {
		t.Errorf("Find = %+v, %v; want %s at %q only", found, err, key, posted)
	}
	sl.FailNext("conversations.history", "missing_scope")
	if _, err := f.Find(t.Context(), "C0DIGEST", nil, []string{key}, since); !errors.Is(err, outbox.ErrCannotLook) || !strings.Contains(err.Error(), "missing_scope") {
		t.Errorf("Find without the scope: %v", err)
	}
}

// BenchmarkBuildAndRender is a full day: 100 bookings built, rendered as
// text and as Slack messages.
func BenchmarkBuildAndRender(b *testing.B) {
	var list []booking.Booking
	for i := range booking.MaxListed {
		start := digestTestDay.Add(7*time.Hour + time.Duration(i)*7*time.Minute).UTC()
		list = append(list, booking.Booking{
			ID: fmt.Sprintf("bk_%03d", i), Start: start, End: start.Add(30 * time.Minute), Status: "confirmed",
			EventType:   booking.Some("consultation"),
			BookerName:  booking.Some(fmt.Sprintf("Attendee Number %03d", i)),
			BookerEmail: booking.Some(fmt.Sprintf("attendee%03d@example.com", i)),
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		d := digest.Build(list, digestTestTypes, digestTestDay, digestTestZone)
		if len(d.Text(true)) == 0 || len(DigestMessages(d, true)) == 0 {
			b.Fatal("nothing rendered")
		}
	}
}
