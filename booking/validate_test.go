package booking

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func testSlot() Slot {
	start := time.Date(2030, 3, 23, 9, 0, 0, 0, time.UTC)
	return Slot{
		Start: start, End: start.Add(15 * time.Minute),
		eventType: "intro", rawStart: "2030-03-23T09:00:00.000Z", rawEnd: "2030-03-23T09:15:00.000Z",
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := CreateRequest{Slot: testSlot(), Name: "Ada Lovelace", Email: "ada@example.com", TimeZone: "Europe/Berlin", Note: "hi"}
	tests := []struct {
		name   string
		mutate func(*CreateRequest)
		fields []string
	}{
		{"ok", func(*CreateRequest) {}, nil},
		{"no tz is fine", func(r *CreateRequest) { r.TimeZone = "" }, nil},
		{"hand-made slot", func(r *CreateRequest) { r.Slot = Slot{Start: r.Slot.Start, End: r.Slot.End} }, []string{"slot"}},
		{"blank name", func(r *CreateRequest) { r.Name = "  " }, []string{"name"}},
		{"no email", func(r *CreateRequest) { r.Email = "" }, []string{"email"}},
		{"bad email", func(r *CreateRequest) { r.Email = "ada@" }, []string{"email"}},
		{"display name email", func(r *CreateRequest) { r.Email = "Ada <ada@example.com>" }, []string{"email"}},
		{"email with spaces", func(r *CreateRequest) { r.Email = " ada@example.com" }, []string{"email"}},
		{"email without domain dot", func(r *CreateRequest) { r.Email = "ada@localhost" }, []string{"email"}},
		{"bad tz", func(r *CreateRequest) { r.TimeZone = "Mars/Olympus" }, []string{"booker_tz"}},
		{"Local tz", func(r *CreateRequest) { r.TimeZone = "Local" }, []string{"booker_tz"}},
		{"offset tz", func(r *CreateRequest) { r.TimeZone = "+01:00" }, []string{"booker_tz"}},
		{"note at limit", func(r *CreateRequest) { r.Note = strings.Repeat("a", 2000) }, nil},
		{"note over limit", func(r *CreateRequest) { r.Note = strings.Repeat("a", 2001) }, []string{"note"}},
		{"emoji note at limit", func(r *CreateRequest) { r.Note = strings.Repeat("😀", 1000) }, nil},
		{"emoji note over limit", func(r *CreateRequest) { r.Note = strings.Repeat("😀", 1000) + "a" }, []string{"note"}},
		{"everything", func(r *CreateRequest) { *r = CreateRequest{} }, []string{"slot", "name", "email"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := ok
			tt.mutate(&r)
			err := r.Validate()
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			var v ValidationError
			if !errors.As(err, &v) {
				t.Fatalf("Validate = %v, want ValidationError", err)
			}
			if len(v) != len(tt.fields) {
				t.Fatalf("problems = %v, want fields %v", v, tt.fields)
			}
			for _, f := range tt.fields {
				if v.Problem(f) == "" {
					t.Errorf("no problem reported for %s: %v", f, v)
				}
			}
		})
	}
}

func TestNoteLengthCountsUTF16(t *testing.T) {
	t.Parallel()
	tests := map[string]int{"": 0, "abc": 3, "é": 1, "日本": 2, "😀": 2, "a\r\nb": 4}
	for in, want := range tests {
		if got := NoteLength(in); got != want {
			t.Errorf("NoteLength(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestValidateBookingID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"bk_12345abcde", "42", "uid-With.Dots_and~tilde", "ünïcode"} {
		if err := ValidateBookingID(id); err != nil {
			t.Errorf("ValidateBookingID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", "a b", "a\tb", "a\nb", "a\x00b", "a\x7fb", "a/b", `a\b`, "a?b", "a#b", "a%2Fb", "\u00a0", "a\u2028b", "\xff", strings.Repeat("a", 201)} {
		if err := ValidateBookingID(id); err == nil {
			t.Errorf("ValidateBookingID(%q) = nil", id)
		}
	}
}

// FuzzValidateBookingID sends every ID that passes validation to a real
// server and checks that it arrives as exactly one path segment.
func FuzzValidateBookingID(f *testing.F) {
	for _, s := range []string{"bk_1", "..", "a/b", "%2e%2e", "a?b#c", "\x00", "a;b=c", "ü&+"} {
		f.Add(s)
	}
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/api/v1/bookings" { // Cancel looks the booking up first
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"bookings":[]}`))
			return
		}
		parts := strings.Split(r.URL.EscapedPath(), "/")
		if len(parts) != 6 || parts[4] == "" || parts[5] != "cancel" || r.URL.RawQuery != "" {
			got <- "bad path " + r.URL.EscapedPath() + "?" + r.URL.RawQuery
		} else if id, err := url.PathUnescape(parts[4]); err != nil {
			got <- "bad escape " + parts[4]
		} else {
			got <- id
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	f.Cleanup(srv.Close)
	key, _ := NewKey(testKey)
	c, err := NewClient(srv.URL, key, WithBackoff(Backoff{Attempts: 1}))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ValidateBookingID(id) != nil {
			return
		}
		res, err := c.Cancel(t.Context(), id)
		if err != nil || res.Outcome != NotFound {
			t.Fatalf("Cancel(%q) = %+v, %v", id, res, err)
		}
		if arrived := <-got; arrived != id {
			t.Fatalf("ID %q arrived as %q", id, arrived)
		}
	})
}

func TestValidateBookingIDRefusesInvisibleCharacters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		id   string
		bad  rune // the character the error must name; -1 when the ID is fine
	}{
		{"right-to-left override", "bk_\u202e1fdp", '\u202e'},
		{"left-to-right override", "bk_\u202d1", '\u202d'},
		{"right-to-left isolate", "bk_\u20671", '\u2067'},
		{"arabic letter mark", "bk_\u061c1", '\u061c'},
		{"zero-width space", "bk_\u200b1", '\u200b'},
		{"zero-width joiner", "bk\u200d_1", '\u200d'},
		{"word joiner", "bk_1\u2060", '\u2060'},
		{"byte order mark", "\ufeffbk_1", '\ufeff'},
		{"soft hyphen", "bk\u00ad_1", '\u00ad'},
		{"private use", "bk_\ue0001", '\ue000'},
		{"NUL", "bk_\x001", 0x00},
		{"escape", "bk_\x1b[31m1", 0x1b},
		{"delete", "bk_\x7f1", 0x7f},
		{"C1 control", "bk_\u009b1", '\u009b'},
		{"accented letters are fine", "bk_ünï", -1},
		{"other scripts are fine", "予約-42", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateBookingID(tt.id)
			if tt.bad < 0 {
				if err != nil {
					t.Fatalf("ValidateBookingID(%q) = %v", tt.id, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateBookingID(%q) = nil, want it refused", tt.id)
			}
			msg := err.Error()
			if want := fmt.Sprintf("%U", tt.bad); !strings.Contains(msg, want) || !strings.Contains(msg, "invisible or control character") {
				t.Errorf("error %q does not name the character %s", msg, want)
			}
			if strings.ContainsRune(msg, tt.bad) {
				t.Errorf("error %q carries the character itself", msg)
			}
		})
	}
}
