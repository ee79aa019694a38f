package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	id := regexp.MustCompile("\\*Booking ID:\\* `([0-9a-f-]{36})`").FindStringSubmatch(text)
	if id == nil {
		t.Fatalf("no booking confirmed:\n%s", text)
	}
	for _, want := range []string{
		"✅ *Booked.* Intro call with Grace Hopper (grace@example.com)",
		"Grace Hopper · grace@example.com · `" + id[1] + "`",
		"Cancel this booking?",
		"🗑 cancelled by you",
		"❌ *Not booked: that time is not free.* Consultation",
		"❌ *Not booked: the booking service refuses this attendee at this time.* Consultation",
		"== Bookings for ",
		"Posted the digest for ",
		"── bookbot in channel CDIGEST ──",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the session lacks %q", want)
		}
	}
	// The sandbox's slots follow today's date, so times are matched by form:
	// the person's in Berlin time, the attendee's in New York time.
	for _, re := range []string{
		`\*Your time:\* \w{3} \d{1,2} \w{3}, \d\d:\d\d–\d\d:\d\d CES?T`,
		`\*Attendee's time:\* \w{3} \d{1,2} \w{3}, \d\d:\d\d–\d\d:\d\d E[SD]T \(America/New_York\)`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("the session lacks a match for %s", re)
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
	if !regexp.MustCompile(`Times in America/New_York \(E[SD]T\)`).Match(out) {
		t.Errorf("the list is not in the person's zone:\n%s", out)
	}
}

// A script stops at the first line that cannot be done, saying which.
func TestDemoScriptStopsAtABadLine(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "bad.script")
	if err := os.WriteFile(script, []byte("/booking list\n:pick 1 1\n/booking help\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), binary, "demo", "-tz", "UTC", "-script", script)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("err = %v, want exit 1\n%s", err, out)
	}
	if !strings.Contains(string(out), `script line 2 (":pick 1 1")`) || strings.Contains(string(out), "`/booking types` – event types") {
		t.Errorf("output:\n%s", out)
	}
	out, err = exec.CommandContext(t.Context(), binary, "demo", "-tz", "Mars/Olympus").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `-tz "Mars/Olympus" is not an IANA time zone`) {
		t.Errorf("bad -tz: %v\n%s", err, out)
	}
}
