package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store/bolt"
)

// costFigures runs the bookbot binary at rest for d with notices on, once
// for each number of people having a reminder and an agenda on, and
// reports how often it reads the bookings list and the CPU time it spends,
// as figures to follow as the work grows, not targets.
func costFigures(ctx context.Context, bin, dir string, people []int, d time.Duration) ([]figure, error) {
	var figs []figure
	for _, n := range people {
		run, err := os.MkdirTemp(dir, "cost")
		if err != nil {
			return nil, err
		}
		users, err := givePeopleSettings(ctx, filepath.Join(run, "state"), n)
		if err != nil {
			return nil, err
		}
		p, err := startPeople(ctx, []string{bin, "run"}, run, users,
			"BOOKBOT_ALLOW_ALL=true", "NOTIFY_CHANNEL=CNOTICES", "BOOKBOT_STATE_DIR="+filepath.Join(run, "state"))
		if err != nil {
			return nil, err
		}
		// The first look at everyone's settings (their zones asked of
		// Slack, kept an hour) is start-up's; the figures are of the looks
		// after it.
		wait := func(d time.Duration) error {
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				p.stop()
				return ctx.Err()
			}
		}
		if err := wait(costWarmUp); err != nil {
			return nil, err
		}
		p.sandbox.ResetRequests()
		cpu0 := cpuTime(p.cmd.Process.Pid)
		if err := wait(d); err != nil {
			return nil, err
		}
		cpu := cpuTime(p.cmd.Process.Pid) - cpu0
		lists := 0
		for _, r := range p.sandbox.Requests() {
			if r.Endpoint == bookingtest.EndpointListBookings {
				lists++
			}
		}
		p.stop()
		figs = append(figs, figure{
			name:   fmt.Sprintf("at rest, notices on, %d with reminders and agendas", n),
			value:  fmt.Sprintf("%.1f GET /bookings a minute, %.1f CPU s an hour", float64(lists)/d.Minutes(), cpu.Seconds()*float64(time.Hour)/float64(d)),
			target: "reported", ok: true,
			note: fmt.Sprintf("%d lists and %v of CPU in %v, from %v after connecting; %v of CPU until then, start-up included", lists, cpu, d, costWarmUp, cpu0),
		})
	}
	return figs, nil
}

// givePeopleSettings gives n people a reminder 15 minutes before each
// booking and a daily agenda, in the store under dir, and returns them as
// the Slack stand-in should know them.
func givePeopleSettings(ctx context.Context, dir string, n int) ([]slacktest.User, error) {
	db, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	users := make([]slacktest.User, n)
	for i := range users {
		users[i] = slacktest.User{ID: fmt.Sprintf("UCOST%04d", i), Name: fmt.Sprintf("cost%d", i), TZ: "Europe/Berlin"}
		set := personal.Settings{Remind: 15 * time.Minute, Agenda: &personal.Agenda{Minute: 8 * 60}, Updated: time.Now()}
		if err := db.Personal().SaveSettings(ctx, users[i].ID, set); err != nil {
			return nil, err
		}
	}
	return users, db.Close()
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
