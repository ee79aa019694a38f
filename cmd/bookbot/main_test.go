package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
)

// binary is the real bookbot, built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bookbot-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "bookbot")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), binary, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "bookbot ") {
		t.Errorf("version = %q", out)
	}
}

func TestUnknownCommandExits2WithUsage(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), binary, "frobnicate")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("err = %v, want exit status 2", err)
	}
	if !strings.Contains(stderr.String(), `unknown command "frobnicate"`) || !strings.Contains(stderr.String(), "bookbot sandbox") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

func TestSandboxServesTheAPIUntilSignalled(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), binary, "sandbox", "-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The sandbox prints its address once it listens.
	var base string
	lines := bufio.NewScanner(stdout)
	for base == "" && lines.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "BOOKING_BASE_URL="); ok {
			base = v
		}
	}
	if base == "" {
		t.Fatal("sandbox printed no BOOKING_BASE_URL")
	}
	go func() {
		for lines.Scan() {
		}
	}()

	key, _ := booking.NewKey(bookingtest.DemoKey)
	c, err := booking.NewClient(base, key)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := c.Slots(t.Context(), "intro-call")
	if err != nil || len(slots) == 0 {
		t.Fatalf("slots: %d, %v", len(slots), err)
	}
	res, err := c.Create(t.Context(), booking.CreateRequest{Slot: slots[0], Name: "Ada", Email: "ada@example.com"})
	if err != nil || res.Outcome != booking.Confirmed {
		t.Fatalf("create = %+v, %v", res, err)
	}
	cancelled, err := c.Cancel(t.Context(), res.Booking.ID)
	if err != nil || cancelled.Outcome != booking.Cancelled {
		t.Fatalf("cancel = %+v, %v", cancelled, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sandbox exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sandbox did not stop on SIGTERM")
	}
}

func TestCommandsNotYetAvailableSayso(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"check"}, func(string) string { return "" }, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("err = %v", err)
	}
}
