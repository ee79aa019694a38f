package booking

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKeyNeverPrints(t *testing.T) {
	t.Parallel()
	k, err := NewKey(" " + testKey + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if k.authorization() != "Bearer "+testKey {
		t.Fatalf("key altered: surrounding space must go, the key must stay intact")
	}
	holder := struct {
		K Key
		P *Key
	}{k, &k}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
		out = append(out, fmt.Sprintf(verb, k), fmt.Sprintf(verb, holder))
	}
	hidden := struct{ k Key }{k} // fmt prints unexported fields without their methods
	out = append(out, fmt.Sprint(k), fmt.Sprintln(k), k.String(), k.GoString(), fmt.Sprintf("%v %+v %#v", hidden, hidden, hidden))
	j, _ := json.Marshal(holder)
	out = append(out, string(j))
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&buf, nil), slog.NewTextHandler(&buf, nil)} {
		slog.New(h).Info("key", "key", k, "holder", holder, "ptr", &k)
	}
	out = append(out, buf.String())
	for _, s := range out {
		if strings.Contains(s, testKey) || strings.Contains(s, "secretpart") || strings.Contains(s, fmt.Sprintf("%x", testKey)) {
			t.Errorf("key printed: %s", s)
		}
	}
}

func TestNewKeyRejects(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "  \n", "abc def", "abc\r\nX-Evil: 1", "abc\x00"} {
		if _, err := NewKey(s); err == nil {
			t.Errorf("NewKey(%q) = nil error", s)
		} else if strings.TrimSpace(s) != "" && strings.Contains(err.Error(), strings.TrimSpace(s)) {
			t.Errorf("error repeats the key: %v", err)
		}
	}
}

func TestKeyFileRotation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	write := func(s string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		// Distinct mtimes, as a real rotation has, without waiting for the clock.
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Now().Add(-time.Hour)
	write("old_key_1\n", base)
	f, err := NewKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := f.Key()
	if k.value() != "old_key_1" {
		t.Fatalf("key = %q", k.value())
	}
	j, _ := json.Marshal(f)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("f", "f", f)
	for _, s := range []string{fmt.Sprint(f), fmt.Sprintf("%+v %#v", f, f), fmt.Sprintf("%+v", struct{ F *KeyFile }{f}), string(j), buf.String()} {
		if strings.Contains(s, "old_key_1") {
			t.Errorf("key file printed its key: %s", s)
		}
	}
	if k.value() != "old_key_1" {
		t.Fatalf("key = %q", k.value())
	}

	write("new_key_2\n", base.Add(time.Second))
	k, err = f.Key()
	if err != nil || k.value() != "new_key_2" {
		t.Fatalf("after rotation key = %q, %v", k.value(), err)
	}

	write("\n", base.Add(2*time.Second))
	if _, err := f.Key(); err == nil {
		t.Fatal("an emptied key file must fail, not keep the old key")
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Key(); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("missing file: err = %v, want it to name the path", err)
	}
}

func TestNewKeyFileMissing(t *testing.T) {
	t.Parallel()
	if _, err := NewKeyFile(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("want error")
	}
}

func TestKeyFileUsedPerRequest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("first_key"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := NewKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		writeJSON(w, 200, `{"bookings":[]}`)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.WriteFile(path, []byte("second_key"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(path, later, later)
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != "Bearer first_key" || seen[1] != "Bearer second_key" {
		t.Errorf("Authorization headers = %q", seen)
	}
}

func TestKeyFileTooLargeIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// A key padded with white space to exactly the cap: trimmed and used.
	atCap := append([]byte("capped_key_7"), bytes.Repeat([]byte("\n"), maxKeyFile-len("capped_key_7"))...)
	tests := []struct {
		name    string
		path    string
		wantKey string // "" when the file must be refused
		why     string // what the refusal says, besides the path
	}{
		{"exactly the cap", write("at-cap", atCap), "capped_key_7", ""},
		{"one byte over the cap", write("over-cap", bytes.Repeat([]byte("k"), maxKeyFile+1)), "", "larger than 64 KiB"},
		{"a key followed by a log", write("log", append([]byte("logged_key_3\n"), bytes.Repeat([]byte("line of a log\n"), 10000)...)), "", "larger than 64 KiB"},
		{"an endless device", "/dev/zero", "", "is a character device, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(tt.path); err != nil {
				t.Skip(err)
			}
			f, err := NewKeyFile(tt.path)
			if tt.wantKey != "" {
				if err != nil {
					t.Fatal(err)
				}
				if k, _ := f.Key(); k.value() != tt.wantKey {
					t.Fatalf("key = %q, want %q", k.value(), tt.wantKey)
				}
				return
			}
			if err == nil {
				t.Fatal("NewKeyFile = nil error, want the file refused")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.path) || !strings.Contains(msg, tt.why) {
				t.Errorf("error %q, want it to name the file and say %q", msg, tt.why)
			}
			for _, content := range []string{"kkk", "logged_key_3", "line of a log", "\x00"} {
				if strings.Contains(msg, content) {
					t.Errorf("error %q shows the file's content", msg)
				}
			}
		})
	}
}

func TestKeyFileRotatedToTooLargeFails(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("first_key"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := NewKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.WriteFile(path, bytes.Repeat([]byte("k"), maxKeyFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if k, err := f.Key(); err == nil {
		t.Fatalf("Key() = %v, nil; want an oversized file to fail, not keep the old key", k)
	}
}
