package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The README's demo script, run by the real binary, shows what a person
// would see: a booking in both zones, the list, a cancel, a refused booking
// and the digest.
func TestDemoScript(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), binary, "demo", "-faults", "-tz", "Europe/Berlin", "-script", filepath.Join("..", "..", "docs", "demo.script"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()} // no configuration at all
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	text := string(out)
	// The booking's ID is for machines: in its notice's metadata, which
	// the console shows as Slack does not.
	id := regexp.MustCompile(`\(for machines, not shown in Slack: bookbot_booking_new, booking_id ([0-9a-f-]{36})\)`).FindStringSubmatch(text)
	if id == nil {
		t.Fatalf("no booking confirmed:\n%s", text)
	}
	// Only the audit, whose lines end in their writes' IDs, and the
	// metadata name it.
	for line := range strings.Lines(text) {
		if strings.Contains(line, id[1]) && !strings.Contains(line, "booking_id "+id[1]) && !strings.Contains(line, " → ") {
			t.Errorf("the session shows the booking ID where people read: %q", line)
		}
	}
	for _, want := range []string{
		"✅ *Booked.* Intro call with Grace Hopper (grace@example.com)",
		"Grace Hopper · grace@example.com\n    [2] ⋯ 1) Cancel…  2) Book again  3) Booking ID",
		"⏳ *Cancelling:* Intro call with Ada Lovelace, tomorrow, ",
		"Cancel this booking?",
		"🗑 cancelled by you",
		"❌ *Not booked: that time is not free.* Consultation",
		"✉️ *Not booked yet: the attendee may need to confirm by email.* Consultation",
		"Posted the digest for ",
		"📅 *New booking* · *Intro call*",
		"Booked by @UDEMO in Slack",
		"🗑 *Cancelled* by @UDEMO in Slack",
		"📅 *New booking* · *Consultation*",
		"Booked outside bookbot",
		"➡️ *Moved* outside Slack: *Consultation* with Ada Lovelace",
		"🗑 *Cancelled* outside Slack",
		"in the thread of ",
		"✅ *Reminders on.* bookbot sends you a direct message 15 minutes before each booking",
		"✅ *Agenda on:* every weekday (Monday to Friday) at 08:00 in Europe/Berlin",
		"⏰ *Reminder*: ",
		" starts in 15 minutes.",
		"== Your day, ",
		// Seven bookings at once: one summary, the list in its thread.
		"*7 booking changes* since ",
		"New booking · *Intro call* · ",
		"offers a 15-minute *Intro call* for @UGRACE — pick a time",
		"You are now grace (Grace Hopper, America/New_York)",
		"✅ *Booked:* Intro call, ",
		", with Grace Hopper (booked by @UGRACE)\n",
		"(for machines, not shown in Slack: bookbot_offer_booked, booking_id ",
		"✅ *Booked from your offer:* Intro call, ",
		// Grace cancels what she booked; you are told.
		"🗑 *Cancelled:* Intro call with Demo Person, ",
		"🗑 *Cancelled by @UGRACE:* Intro call with Grace Hopper, ",
		// Where scheduling starts: a link, a message's menu, a workflow.
		"── bookbot's card under the link https://book.example.com/demo/consultation in message ",
		"📅 *Consultation* · 30 minutes — pick a time",
		"(Booked so far: Consultation, ",
		"✅ *Posted:* your offer of *Intro call* is in the conversation: @UGRACE can book one time.",
		"── Workflow Builder: the step ended, the workflow goes on with booking_id ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the session lacks %q", want)
		}
	}
	// Tomorrow's digest lists the day, or is one quiet line on a free day.
	if !strings.Contains(text, "== Bookings, ") && !strings.Contains(text, "(No bookings tomorrow, ") {
		t.Error("the session lacks the digest")
	}
	// The sandbox's slots follow today's date, so times are matched by form:
	// the person's as Slack shows a date token in their zone (Berlin), the
	// attendee's in New York time, five or six hours earlier.
	yours := regexp.MustCompile(`\*Your time:\* (?:today|tomorrow|\w{3} \d{1,2} \w{3}), (\d\d):\d\d–\d\d:\d\d\n`).FindStringSubmatch(text)
	theirs := regexp.MustCompile(`\*Attendee's time:\* (\d\d):\d\d–\d\d:\d\d E[SD]T(?: the day before)?, in America/New_York`).FindStringSubmatch(text)
	if yours == nil || theirs == nil {
		t.Errorf("the session lacks the booked times: %q, %q", yours, theirs)
	} else if h1, h2 := atoi(yours[1]), atoi(theirs[1]); (h1-h2+24)%24 != 6 && (h1-h2+24)%24 != 5 {
		t.Errorf("your time %s:00 and the attendee's %s:00 are not Berlin and New York", yours[1], theirs[1])
	}
	if t.Failed() {
		t.Logf("session:\n%s", text)
	}
}

// The owner's settings the service answers plainly, each switched on with
// a :fault, are said as they are: a full calendar, a blocked attendee, a
// note the event type requires, an event type's hour used up (another
// event type still books), and a booking that needed the attendee's email
// confirmation, which the link then books and the notice tells.
func TestDemoServiceEdges(t *testing.T) {
	t.Parallel()
	book := func(event, slot, name, email string) string {
		return "/booking new " + event + "\n:pick 3 " + slot + "\n:set 4 " + name + "\n:set 5 " + email + "\n:submit\n:close\n"
	}
	script := ":fault create full\n" + book("consultation", "1", "Alan Turing", "alan@example.com") + ":fault off\n" +
		":fault block example.net\n" + book("consultation", "1", "Eve", "eve@example.net") + ":fault off\n" +
		":fault note consultation\n" + book("consultation", "2", "Alan Turing", "alan@example.com") + ":fault off\n" +
		":fault create hourly intro-call\n" + book("intro-call", "1", "Alan Turing", "alan@example.com") +
		book("consultation", "3", "Alan Turing", "alan@example.com") +
		":later 2m\n" + book("office-hours", "1", "Grace Hopper", "grace@example.com") + ":attendee confirm\n:quit\n"
	path := filepath.Join(t.TempDir(), "edges.script")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), binary, "demo", "-faults", "-tz", "Europe/Berlin", "-script", path)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"⛔ *Not booked: the booking service takes no new bookings.* Consultation",
		"⛔ *Not booked: the booking service refused this booking for this attendee.* Consultation",
		"its whole domain (example.net)",
		"❌ *Not booked: the booking service refused the form.* Consultation",
		"⏱ *Refused by the booking service: too many attempts for this event type.* Intro call",
		"bookbot holds bookings of Intro call back for 1 hour; other event types can be booked now.",
		"✅ *Booked.* Consultation with Alan Turing",
		"✉️ *Not booked yet: the attendee may need to confirm by email.* Office hours",
		"attendee confirmed by email: office-hours",
		"📅 *New booking* · *Office hours*",
		"Booked once the attendee confirmed by email: bookbot's attempt by @UDEMO in Slack",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the session lacks %q", want)
		}
	}
	for _, untrue := range []string{"did not answer clearly", "unclear", "refused access", "few minutes"} {
		if strings.Contains(text, untrue) {
			t.Errorf("the session says %q", untrue)
		}
	}
	if t.Failed() {
		t.Logf("session:\n%s", text)
	}
}

// Typed input works the same as a script, and EOF ends the session.
func TestDemoReadsTheTerminal(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), binary, "demo", "-tz", "America/New_York")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.Stdin = strings.NewReader("/booking help\n/booking nonsense\n7\n:fault create 409\n/booking list\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{
		"`/booking list` – upcoming bookings",
		"I don't know `nonsense`",
		"! there is no control 7",
		"! fault knobs are off: start the demo with -faults",
		"Ada Lovelace · ada.lovelace@example.com",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the session lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`Times in America/New_York \(E[SD]T`).Match(out) {
		t.Errorf("the list is not in the person's zone:\n%s", out)
	}
}

// A script stops at the first line that cannot be done, saying which.
func TestDemoScriptStopsAtABadLine(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "bad.script")
	if err := os.WriteFile(script, []byte("/booking list\n:pick 1 9\n/booking help\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), binary, "demo", "-tz", "UTC", "-script", script)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("err = %v, want exit 1\n%s", err, out)
	}
	if !strings.Contains(string(out), `script line 2 (":pick 1 9")`) || strings.Contains(string(out), "`/booking types` – event types") {
		t.Errorf("output:\n%s", out)
	}
	out, err = exec.CommandContext(t.Context(), binary, "demo", "-tz", "Mars/Olympus").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `-tz "Mars/Olympus" is not an IANA time zone`) {
		t.Errorf("bad -tz: %v\n%s", err, out)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// An attendee on the public booking page books, moves and cancels behind
// bookbot's back (:attendee); /booking list follows each change.
func TestDemoAttendee(t *testing.T) {
	t.Parallel()
	s := startDemo(t, "-tz", "Europe/Berlin")
	s.next() // the banner

	// Slot 3, not 1: the first may start before the list is read.
	out := s.do(":attendee book consultation 3")
	booked := regexp.MustCompile(`attendee booked consultation at \w{3} \d{1,2} \w{3}, (\d\d:\d\d–\d\d:\d\d) CES?T \(booking ([0-9a-f-]{36})\) as Ada Lovelace <ada@example.com>\n`).FindStringSubmatch(out)
	if booked == nil {
		t.Fatalf("no booking:\n%s", out)
	}
	hours, id := booked[1], booked[2]
	list := s.do("/booking list")
	if row := listedRow(list, "ada@example.com"); !strings.Contains(row, hours) || !strings.Contains(row, "Ada Lovelace · ada@example.com") {
		t.Errorf("the list shows the attendee's booking as %q, want %s, Ada Lovelace, ada@example.com:\n%s", row, hours, list)
	}
	count := listedCount(t, list)

	out = s.do(":attendee move " + id + " 6")
	moved := regexp.MustCompile(`attendee moved consultation from \w{3} \d{1,2} \w{3}, ` + hours + ` CES?T to \w{3} \d{1,2} \w{3}, (\d\d:\d\d–\d\d:\d\d) CES?T \(booking ` + id + `\)\n`).FindStringSubmatch(out)
	if moved == nil {
		t.Fatalf("not moved:\n%s", out)
	}
	list = s.do("/booking list")
	if row := listedRow(list, "ada@example.com"); !strings.Contains(row, moved[1]) || strings.Contains(row, hours) {
		t.Errorf("after the move to %s the list shows %q:\n%s", moved[1], row, list)
	}
	if n := listedCount(t, list); n != count {
		t.Errorf("%d bookings listed after the move, want %d", n, count)
	}

	if out := s.do(":attendee cancel " + id); !strings.Contains(out, "attendee cancelled consultation at ") || !strings.Contains(out, moved[1]) {
		t.Errorf("not cancelled:\n%s", out)
	}
	list = s.do("/booking list")
	if listedRow(list, "ada@example.com") != "" || listedCount(t, list) != count-1 {
		t.Errorf("the cancelled booking is still listed:\n%s", list)
	}

	// Mistakes are one line each, and the session goes on.
	for line, want := range map[string]string{
		":attendee cancel " + id:                                "! booking " + id + " is cancelled already",
		":attendee move " + id + " 1":                           "! booking " + id + " is cancelled; there is nothing to move",
		":attendee move nonsense 1":                             `! there is no booking "nonsense" in the demo calendar`,
		":attendee book nope 1":                                 `! there is no event type "nope"`,
		":attendee book consultation 0":                         `! "0" is not a slot number`,
		":attendee book consultation 100000":                    "! consultation has free slots 1–",
		":attendee book consultation":                           "! usage: :attendee book EVENT N",
		":attendee":                                             "! usage: :attendee book EVENT N",
		":help":                                                 ":attendee move ID N     the attendee of booking ID moves it",
		":attendee book team-sync 1":                            "so bookbot cannot see it",
		":attendee move 5eed0000-0000-4000-8000-000000000011 1": "legacy record without an event type; it cannot be moved",
	} {
		if out := s.do(line); !strings.Contains(out, want) || strings.Count(out, "\n") > 1 && !strings.HasPrefix(line, ":help") {
			t.Errorf("%s: got %q, want %q on one line", line, out, want)
		}
	}
	s.quit()
}

// listedRow is the line of a /booking list that shows who's booking,
// by its attendee.
func listedRow(list, who string) string {
	for line := range strings.Lines(list) {
		if strings.Contains(line, who) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func listedCount(t *testing.T, list string) int {
	t.Helper()
	m := regexp.MustCompile(`Upcoming bookings \((\d+)\)`).FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("not a list:\n%s", list)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// demoSession is `bookbot demo` at a terminal: a line typed, its output
// read up to the next prompt.
type demoSession struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	chunks chan string // the output as it comes; closed at its end
	unread string
	all    strings.Builder
}

func startDemo(t *testing.T, args ...string) *demoSession {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary, append([]string{"demo"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &demoSession{t: t, cmd: cmd, stdin: stdin, chunks: make(chan string, 64)}
	go func() {
		defer close(s.chunks)
		buf := make([]byte, 4096)
		for {
			n, err := stdout.Read(buf)
			if n > 0 {
				s.chunks <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		if cmd.ProcessState == nil { // the test stopped early
			_ = cmd.Process.Kill()
			go func() {
				for range s.chunks {
				}
			}()
			_ = cmd.Wait()
		}
	})
	return s
}

// next returns the output up to the next prompt.
func (s *demoSession) next() string {
	s.t.Helper()
	const prompt = "\nyou> "
	timeout := time.After(time.Minute)
	for {
		if i := strings.Index(s.unread, prompt); i >= 0 {
			out := s.unread[:i]
			s.unread = s.unread[i+len(prompt):]
			return out
		}
		select {
		case c, ok := <-s.chunks:
			if !ok {
				s.t.Fatalf("the demo ended:\n%s", s.all.String())
			}
			s.unread += c
			s.all.WriteString(c)
		case <-timeout:
			s.t.Fatalf("no prompt within a minute:\n%s", s.all.String())
		}
	}
}

// do types a line and returns its output.
func (s *demoSession) do(line string) string {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
	return strings.TrimPrefix(s.next(), "\n")
}

// quit ends the session, which must exit cleanly.
func (s *demoSession) quit() {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, ":quit\n"); err != nil {
		s.t.Fatal(err)
	}
	for range s.chunks {
	}
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("demo: %v", err)
	}
}

// :connect connects the sandbox's second calendar: the person's commands
// then show it, and disconnecting goes back to the owner's.
func TestDemoConnect(t *testing.T) {
	t.Parallel()
	s := startDemo(t, "-tz", "Europe/Berlin")
	s.next() // the banner
	if out := s.do("/booking types"); !strings.Contains(out, "Intro call") {
		t.Fatalf("the owner's types are not shown:\n%s", out)
	}
	if out := s.do(":connect"); !strings.Contains(out, "Connected: your calendar (1 event type)") {
		t.Fatalf(":connect:\n%s", out)
	}
	out := s.do("/booking types")
	if !strings.Contains(out, "Other call") || strings.Contains(out, "Intro call") {
		t.Errorf("after :connect, the types are not the second calendar's:\n%s", out)
	}
	if out := s.do("/booking account"); !strings.Contains(out, "your own calendar") {
		t.Errorf("account:\n%s", out)
	}
	if out := s.do("/booking disconnect"); !strings.Contains(out, "Disconnected") {
		t.Errorf("disconnect:\n%s", out)
	}
	if out := s.do("/booking types"); !strings.Contains(out, "Intro call") {
		t.Errorf("after disconnecting, the owner's types are not shown:\n%s", out)
	}
	s.quit()
}

// The demo's step is the one the manifest declares.
func TestDemoStepIsTheManifests(t *testing.T) {
	t.Parallel()
	m := manifestStep(t)
	if !reflect.DeepEqual(demoStep, m) {
		t.Errorf("the demo's step:\n %+v\nthe manifest's:\n %+v", demoStep, m)
	}
}
