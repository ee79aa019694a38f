package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/internal/plaintext"
	"github.com/bookbot/bookbot/store"
	"github.com/bookbot/bookbot/store/bolt"
)

// runAudit prints the write journal: every create and cancel bookbot sent
// (or, in a dry run, would have), who asked, the outcome and its review.
// It only reads, so it can run beside `bookbot run`.
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	since := fs.Duration("since", 24*time.Hour, "how far back to show, such as 2h or 720h")
	asJSON := fs.Bool("json", false, "print one JSON object per entry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("audit: unexpected argument %q", fs.Arg(0))
	}
	if *since <= 0 {
		return fmt.Errorf("audit: -since must be positive, such as 24h")
	}
	cfg, err := config.Load(getenv, 0)
	if err != nil {
		return err
	}
	if err := embeddedOnly(cfg, "audit"); err != nil {
		return err
	}
	cfg.LogWarnings(app.NewLogger(cfg, stderr))
	st, err := store.Open(ctx, stateOf(cfg, store.ReadOnly))
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer st.Close()
	from := time.Now().Add(-*since)
	list, err := st.Journal.Since(from)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, e := range list {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	waiting := 0
	for _, e := range list {
		fmt.Fprint(stdout, auditText(e, time.Local))
		if e.AwaitingReview() {
			waiting++
		}
	}
	fmt.Fprintf(stdout, "%d writes since %s in %s; %d awaiting a human check.\n",
		len(list), from.In(time.Local).Format("2006-01-02 15:04 MST"), filepath.Join(cfg.StateDir, bolt.FileName), waiting)
	return nil
}

// calendarOf names the calendar e went to, for the operator, who sees
// every calendar's: the owner's, or a person's own by its ID (shared by
// everyone who connected its key), with whose key it went through.
func calendarOf(e journal.Entry) string {
	switch id := e.CalendarOf(); {
	case id == booking.Owner && (e.Calendar == "" || e.Calendar == booking.Owner):
		return "the owner's calendar"
	case id == booking.Owner:
		return "the owner's calendar, through " + e.Calendar + "'s key"
	case id == "":
		return e.Calendar + "'s own calendar"
	}
	return e.Calendar + "'s own calendar " + e.CalendarID
}

// auditText is one journal entry as a few indented lines, times in loc.
func auditText(e journal.Entry, loc *time.Location) string {
	// A name may hold newlines or a terminal's escape sequences: every
	// field prints inert, on its own line.
	e.Actor, e.EventType, e.Start, e.End = plaintext.Line(e.Actor), plaintext.Line(e.EventType), plaintext.Line(e.Start), plaintext.Line(e.End)
	e.Name, e.Email, e.BookingID, e.Created = plaintext.Line(e.Name), plaintext.Line(e.Email), plaintext.Line(e.BookingID), plaintext.Line(e.Created)
	e.ReportedTo, e.ReviewedBy, e.Calendar, e.CalendarID = plaintext.Line(e.ReportedTo), plaintext.Line(e.ReviewedBy), plaintext.Line(e.Calendar), plaintext.Line(e.CalendarID)
	seen := make([]string, len(e.Seen))
	for i, s := range e.Seen {
		seen[i] = plaintext.Line(s)
	}
	e.Seen = seen
	var b strings.Builder
	stamp := func(t time.Time) string { return t.In(loc).Format("2006-01-02 15:04:05 MST") }
	who := "(no Slack user)"
	if e.Actor != "" {
		who = "by " + e.Actor
	}
	dry := ""
	if e.DryRun {
		dry = " [dry run]"
	}
	fmt.Fprintf(&b, "#%d  %s  %s %s on %s%s\n", e.Seq, stamp(e.At), e.Op, who, calendarOf(e), dry)
	switch e.Op {
	case booking.OpCancel:
		fmt.Fprintf(&b, "    booking %s", e.BookingID)
		if e.Start != "" {
			fmt.Fprintf(&b, ": %s %s for %s", e.EventType, e.Start, e.Name)
		}
		b.WriteString("\n")
	default:
		fmt.Fprintf(&b, "    %s %s – %s for %s <%s>\n", e.EventType, e.Start, e.End, e.Name, e.Email)
	}
	outcome := string(e.Outcome)
	if e.Open() {
		outcome = "none recorded: in flight, or bookbot stopped before the answer (settled on its next start)"
	}
	if e.Reason != "" {
		outcome += " (" + string(e.Reason) + ")"
	}
	if e.Created != "" {
		outcome += ", booking " + e.Created
	}
	if e.Verified {
		outcome += ", verified in the bookings list"
	}
	if e.Recovered {
		outcome += ", settled after a restart"
	}
	fmt.Fprintf(&b, "    outcome: %s\n", outcome)
	if e.NeedsReview {
		review := "needs a human check"
		if !e.ReportedAt.IsZero() {
			review += fmt.Sprintf("; reported to %s at %s", e.ReportedTo, stamp(e.ReportedAt))
		} else {
			review += "; not yet reported"
		}
		if !e.ReviewedAt.IsZero() {
			review += fmt.Sprintf("; checked by %s at %s", e.ReviewedBy, stamp(e.ReviewedAt))
		}
		fmt.Fprintf(&b, "    review: %s\n", review)
	}
	if len(e.Seen) > 0 {
		fmt.Fprintf(&b, "    seen: %s\n", strings.Join(e.Seen, "; "))
	}
	return b.String()
}
