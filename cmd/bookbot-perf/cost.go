package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store"
)

// costFigures runs the bookbot binary at rest for d with notices on, once
// for each number of people having a reminder and an agenda on, and
// reports how often it reads the bookings list and the CPU time it spends,
// as figures to follow as the work grows, not targets.
func costFigures(ctx context.Context, bin, dir string, people []int, d time.Duration) ([]figure, error) {
	var figs []figure
	for _, n := range people {
		f, err := costRun(ctx, bin, dir, n, 0, d)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// calendarCostFigures is costFigures with n people each acting on a
// calendar of their own (each a key of its own at the sandbox), for each n
// of calendars: each person has a reminder and an agenda, and their own
// calendar's notices on (by direct message, the default), beside the
// owner's notices.
func calendarCostFigures(ctx context.Context, bin, dir string, calendars []int, d time.Duration) ([]figure, error) {
	var figs []figure
	for _, n := range calendars {
		f, err := costRun(ctx, bin, dir, n, n, d)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// costRun is one run of the cost measurement: n people with a reminder and
// an agenda, the first own of them with a calendar of their own.
func costRun(ctx context.Context, bin, dir string, n, own int, d time.Duration) (figure, error) {
	run, err := os.MkdirTemp(dir, "cost")
	if err != nil {
		return figure{}, err
	}
	state := filepath.Join(run, "state")
	users, err := givePeopleSettings(ctx, state, n)
	if err != nil {
		return figure{}, err
	}
	env := []string{"BOOKBOT_ALLOW_ALL=true", "NOTIFY_CHANNEL=CNOTICES", "BOOKBOT_STATE_DIR=" + state}
	var keys map[string]string // owner ID at the sandbox → key
	if own > 0 {
		secret, k, err := connectCalendars(ctx, state, users[:own])
		if err != nil {
			return figure{}, err
		}
		keys = k
		env = append(env, "BOOKBOT_SECRET_KEY="+secret)
	}
	addOwners := func(sb *bookingtest.Sandbox) {
		for owner, key := range keys {
			sb.AddOwner(key, owner, time.UTC, bookingtest.Weekdays(0, 24*time.Hour))
		}
	}
	p, err := startWith(ctx, []string{bin, "run"}, run, users, addOwners, env...)
	if err != nil {
		return figure{}, err
	}
	defer p.stop()
	// The first look at everyone's settings (their zones asked of Slack,
	// kept an hour) is start-up's; the figures are of the looks after it.
	wait := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := wait(costWarmUp); err != nil {
		return figure{}, err
	}
	p.sandbox.ResetRequests()
	cpu0 := cpuTime(p.cmd.Process.Pid)
	if err := wait(d); err != nil {
		return figure{}, err
	}
	cpu := cpuTime(p.cmd.Process.Pid) - cpu0
	lists, ownLists := 0, 0
	for _, r := range p.sandbox.Requests() {
		if r.Endpoint != bookingtest.EndpointListBookings {
			continue
		}
		lists++
		if _, ok := keys[r.Owner]; ok {
			ownLists++
		}
	}
	perMin := func(n int) float64 { return float64(n) / d.Minutes() }
	f := figure{
		name:   fmt.Sprintf("at rest, notices on, %d with reminders and agendas", n),
		value:  fmt.Sprintf("%.1f GET /bookings a minute, %.1f CPU s an hour", perMin(lists), cpu.Seconds()*float64(time.Hour)/float64(d)),
		target: "reported", ok: true,
		note: fmt.Sprintf("%d lists and %v of CPU in %v, from %v after connecting; %v of CPU until then, start-up included", lists, cpu, d, costWarmUp, cpu0),
	}
	if own > 0 {
		f.name = fmt.Sprintf("at rest, %d connected calendars with notices, reminders and agendas, and the owner's notices", own)
		f.value = fmt.Sprintf("%.2f GET /bookings a minute a calendar (%.1f in all, %.1f the owner's), %.1f CPU s an hour",
			perMin(ownLists)/float64(own), perMin(lists), perMin(lists-ownLists), cpu.Seconds()*float64(time.Hour)/float64(d))
	}
	return f, nil
}

// connectCalendars connects each of users to a calendar of their own, as
// `/booking connect` leaves it in the store under dir: the key sealed
// under a new secret key, notices by direct message. It returns the secret
// key (BOOKBOT_SECRET_KEY) and each calendar's key by its owner ID at the
// sandbox.
func connectCalendars(ctx context.Context, dir string, users []slacktest.User) (string, map[string]string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	secret := base64.StdEncoding.EncodeToString(b)
	raw, err := account.ParseSecret(secret)
	if err != nil {
		return "", nil, err
	}
	sealer, err := account.NewSealer(raw)
	if err != nil {
		return "", nil, err
	}
	st, err := store.Open(ctx, store.Options{StateDir: dir})
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	keys := map[string]string{}
	for i, u := range users {
		owner, text := fmt.Sprintf("ocal%04d", i), fmt.Sprintf("perf_calendar_key_%04d_%x", i, b[:4])
		key, err := booking.NewKey(text)
		if err != nil {
			return "", nil, err
		}
		sealed, err := sealer.Seal(u.ID, key)
		if err != nil {
			return "", nil, err
		}
		a := account.Account{User: u.ID, Sealed: sealed, ConnectedAt: time.Now(), State: account.OK, Notices: account.NoticesDM}
		if err := st.Accounts.Put(ctx, a); err != nil {
			return "", nil, err
		}
		keys[owner] = text
	}
	return secret, keys, nil
}

// givePeopleSettings gives n people a reminder 15 minutes before each
// booking and a daily agenda, in the store under dir, and returns them as
// the Slack stand-in should know them.
func givePeopleSettings(ctx context.Context, dir string, n int) ([]slacktest.User, error) {
	st, err := store.Open(ctx, store.Options{StateDir: dir})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	users := make([]slacktest.User, n)
	for i := range users {
		users[i] = slacktest.User{ID: fmt.Sprintf("UCOST%04d", i), Name: fmt.Sprintf("cost%d", i), TZ: "Europe/Berlin"}
		set := personal.Settings{Remind: 15 * time.Minute, Agenda: &personal.Agenda{Minute: 8 * 60}, Updated: time.Now()}
		if err := st.Personal.SaveSettings(ctx, users[i].ID, set); err != nil {
			return nil, err
		}
	}
	return users, nil
}

// costWarmUp is how long after connecting the cost measurement begins:
// the reminders' first look and a little more.
const costWarmUp = 40 * time.Second

// cpuTime is the user and system CPU time a process has used
// (/proc/PID/stat), 0 when unknown.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses and
	// may hold spaces: state is the first, utime the 12th, stime the 13th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is the unit of /proc's CPU times (USER_HZ), 100 on Linux.
const clockTicks = 100
