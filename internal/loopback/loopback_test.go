package loopback

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestServesUntilCloseWhichWaitsForAnswers(t *testing.T) {
	t.Parallel()
	started, finish := make(chan struct{}), make(chan struct{})
	answered := false
	s := Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-finish
			answered = true
		}
		io.WriteString(w, "hello")
	}))
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want http://127.0.0.1:PORT", s.URL)
	}
	resp, err := s.Client().Get(s.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello" {
		t.Errorf("body = %q, want hello", body)
	}

	go func() {
		if resp, err := s.Client().Get(s.URL + "/slow"); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while a request was being answered")
	case <-time.After(50 * time.Millisecond):
	}
	close(finish)
	<-closed
	if !answered {
		t.Error("Close returned before the handler did")
	}
	if _, err := s.Client().Get(s.URL + "/"); err == nil {
		t.Error("GET after Close succeeded")
	}
	s.Close() // a second Close is harmless
}
