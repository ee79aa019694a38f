package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/cmd/internal/metrics"
)

// The listener logs the address it bound, serves the probes and metrics
// there, and answers nothing once stopped.
func TestHTTPListener(t *testing.T) {
	t.Parallel()
	logs := newLogLines()
	log := slog.New(slog.NewTextHandler(logs, nil))
	stop, err := startHTTP("127.0.0.1:0", metrics.New().Handler(), log)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(strings.SplitN(logs.String(), "addr=", 2)[1])
	base := "http://" + addr

	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("/healthz = %d %q", resp.StatusCode, body)
	}

	stop()
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the listener still answers after stop")
	}
}

func TestHTTPListenerAddressTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = startHTTP(ln.Addr().String(), metrics.New().Handler(), slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "BOOKBOT_HTTP_ADDR="+ln.Addr().String()) {
		t.Fatalf("err = %v, want one naming BOOKBOT_HTTP_ADDR and the address", err)
	}
}

func TestHTTPListenerOff(t *testing.T) {
	t.Parallel()
	stop, err := startHTTP("", metrics.New().Handler(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	stop()
}
