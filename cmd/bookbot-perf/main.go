// Command bookbot-perf measures bookbot against its performance budget on
// loopback: it builds the real binary, runs it against the sandbox booking
// API and the local Slack stand-in (both in this process, so their clocks
// take the timestamps), drives it like Slack would and prints each figure
// next to its target. docs/performance.md explains the method.
//
//	go run ./cmd/bookbot-perf                        # everything
//	go run ./cmd/bookbot-perf -only ack,modal        # the bursts
//	go run ./cmd/bookbot-perf -only cost             # list reads and CPU at rest
//	go run ./cmd/bookbot-perf -only cost -calendars 1,10   # the same with connected calendars
//	go run ./cmd/bookbot-perf -cpuprofile cpu.out    # profile the ack bursts (-profile modal: the opens')
//	go run ./cmd/bookbot-perf -memprofile heap.out   # heap before/after the interactions
//
// It exits with status 1 when a figure misses its target.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
)

const user = "UPERF"

// idleAfterStart is how long the bot is left idle after connecting before
// its resident set at idle is read.
const idleAfterStart = 2 * time.Second

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bookbot-perf:", err)
		os.Exit(1)
	}
}

type figure struct {
	name, value, target string
	ok                  bool
	note                string
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bookbot-perf", flag.ContinueOnError)
	n := fs.Int("n", 300, "slash commands in the ack burst")
	modals := fs.Int("modals", 50, "modal openings measured")
	interactions := fs.Int("interactions", 1000, "interactions in the memory run")
	costFor := fs.Duration("cost-for", 2*time.Minute, "cost measurement: how long the bot is left at rest for each number of people (not in the default set)")
	calendars := fs.String("calendars", "", "cost measurement: comma-separated numbers of people with a connected calendar each (e.g. `1,10`) to measure instead of 0, 1 and 1,000 people on the owner's")
	only := fs.String("only", "", "comma-separated subset: startup,ack,modal,overhead,memory,runtime (goroutines is runtime); settle and cost are not in the default set")
	cpuprofile := fs.String("cpuprofile", "", "only write profiles of the bot (the -serve-bot child) answering 5 bursts (-profile): CPU to `FILE`, heap, block and mutex to FILE.heap, FILE.block, FILE.mutex, and the CPU of the stand-ins (this process) to FILE.standin")
	profile := fs.String("profile", "ack", "what -cpuprofile profiles: `ack` (bursts of -n /booking list, API at 1 s) or modal (bursts of -modals /booking new, API at 2 s)")
	memprofile := fs.String("memprofile", "", "write heap profiles of the bot (the -serve-bot child) in the runtime measurement: after one of each (`FILE`.base), after the interactions (FILE), once the windows passed (FILE.later)")
	burstKind := fs.String("burst", "list", "what the ack bursts send: `list` (/booking list, each starts a GET /bookings) or foreign (/booking list from another workspace: acked, nothing started)")
	settle := fs.Duration("settle", 150*time.Second, "settle measurement: how long the bot is left idle before what its heap keeps from the OS is read")
	database := fs.String("database", "", "run the bot with BOOKBOT_DATABASE_URL=`URL` (its state in PostgreSQL, as replicas keep it); the database is emptied before each start")
	serve := fs.Bool("serve-bot", false, "internal: be the bot, configured from the environment, with a stats endpoint on $"+statsSockEnv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *serve {
		return serveBot(ctx)
	}
	var calendarCounts []int
	for c := range strings.SplitSeq(*calendars, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return fmt.Errorf("-calendars %q: want numbers from 1, comma-separated", *calendars)
		}
		calendarCounts = append(calendarCounts, n)
	}
	if *burstKind != "list" && *burstKind != "foreign" {
		return fmt.Errorf("-burst %q: want list or foreign", *burstKind)
	}
	foreign = *burstKind == "foreign"
	want := func(name string) bool {
		if *only == "" {
			return name != "settle" && name != "cost" // explanations, not budget figures
		}
		parts := strings.Split(*only, ",")
		return slices.Contains(parts, name) || (name == "runtime" && slices.Contains(parts, "goroutines"))
	}

	dir, err := os.MkdirTemp("", "bookbot-perf")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if *cpuprofile != "" {
		switch *profile {
		case "ack":
			return profileBursts(ctx, dir, *profile, *n, *cpuprofile)
		case "modal":
			return profileBursts(ctx, dir, *profile, *modals, *cpuprofile)
		}
		return fmt.Errorf("-profile %q: want ack or modal", *profile)
	}
	if *memprofile != "" && *only == "" {
		*only = "runtime"
	}
	bin := filepath.Join(dir, "bookbot")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/bookbot")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build (run from the repository root): %v\n%s", err, b)
	}
	st, err := os.Stat(bin)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "bookbot-perf: %s, %d CPUs, %s/%s\n\n", runtime.Version(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)

	var figs []figure
	figs = append(figs, figure{name: "static binary size (stripped)", value: fmt.Sprintf("%.1f MB", float64(st.Size())/1e6), target: "≤ 15 MB", ok: st.Size() <= 15e6})

	if want("startup") || want("ack") || want("modal") || want("overhead") || want("memory") {
		var env []string
		if *database != "" { // the -serve-bot child keeps no state: only `bookbot run` takes it
			if err := emptyDatabase(ctx, *database); err != nil {
				return err
			}
			env = append(env, "BOOKBOT_DATABASE_URL="+*database)
		}
		p, err := start(ctx, []string{bin, "run"}, dir, env...)
		if err != nil {
			return err
		}
		figs = append(figs, figure{name: "start-up to connected", value: ms(p.startup), target: "≤ 300 ms", ok: p.startup <= 300*time.Millisecond})
		// What start-up left behind, once the bot has been idle a moment
		// (the scheduled work makes its first reads right after start).
		select {
		case <-time.After(idleAfterStart):
		case <-ctx.Done():
			return ctx.Err()
		}
		rss0 := p.memSnap()
		figs = append(figs, figure{name: "resident set at idle, after start", value: mb(rss0.rss), target: "≤ 14 MB", ok: rss0.rss > 0 && rss0.rss <= 14e6,
			note: fmt.Sprintf("%v after connecting; anonymous %s + file-backed %s (the executable's pages)", idleAfterStart, mb(rss0.anon), mb(rss0.file))})
		if want("ack") {
			f, err := p.ackBurst(ctx, *n)
			if err != nil {
				return fmt.Errorf("ack: %w", err)
			}
			figs = append(figs, f...)
		}
		if want("modal") {
			f, err := p.modalLatency(ctx, *modals)
			if err != nil {
				return fmt.Errorf("modal: %w", err)
			}
			dialled := p.sl.Dialled()
			took, err := p.modalBurst(ctx, *modals)
			if err != nil {
				return fmt.Errorf("modal burst: %w", err)
			}
			p99 := pct(took, 99)
			figs = append(figs, f, figure{name: fmt.Sprintf("views.open, %d at once, p50 / p99 / max", *modals), value: spread(took), target: "p99 ≤ 25 ms", ok: p99 <= 25*time.Millisecond,
				note: fmt.Sprintf("from the envelope written on the WebSocket to views.open received; API at 2 s; %d connections dialled to Slack", p.sl.Dialled()-dialled)})
		}
		if want("overhead") {
			f, err := p.overhead(ctx)
			if err != nil {
				return fmt.Errorf("overhead: %w", err)
			}
			figs = append(figs, f...)
		}
		if want("memory") {
			f, err := p.memory(ctx, *interactions, rss0)
			if err != nil {
				return fmt.Errorf("memory: %w", err)
			}
			figs = append(figs, f)
		}
		peak := statusField(p.cmd.Process.Pid, "VmHWM")
		figs = append(figs, figure{name: "resident set peak", value: mb(peak), target: "≤ 45 MB", ok: peak > 0 && peak <= 45e6,
			note: "VmHWM after every measurement above"})
		p.stop()
	}
	if want("runtime") {
		f, err := runtimeFigures(ctx, dir, *interactions, *memprofile)
		if err != nil {
			return fmt.Errorf("runtime: %w", err)
		}
		figs = append(figs, f...)
	}
	if want("cost") {
		f, err := costFigures(ctx, bin, dir, []int{0, 1, 1000}, *costFor)
		if len(calendarCounts) > 0 {
			f, err = calendarCostFigures(ctx, bin, dir, calendarCounts, *costFor)
		}
		if err != nil {
			return fmt.Errorf("cost: %w", err)
		}
		figs = append(figs, f...)
	}
	if want("settle") {
		f, err := settleFigures(ctx, dir, *n, *interactions, *settle)
		if err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		figs = append(figs, f...)
	}

	missed := 0
	fmt.Fprintf(out, "%-52s %-30s %-12s %s\n", "figure", "measured", "target", "")
	for _, f := range figs {
		verdict := "PASS"
		if !f.ok {
			verdict = "MISS"
			missed++
		}
		fmt.Fprintf(out, "%-52s %-30s %-12s %s\n", f.name, f.value, f.target, verdict)
		if f.note != "" {
			fmt.Fprintf(out, "    %s\n", f.note)
		}
	}
	if missed > 0 {
		return fmt.Errorf("%d figure(s) missed their target", missed)
	}
	return nil
}

// proc is the bot (the bookbot binary, or this program as -serve-bot)
// running against the stand-ins in this process.
type proc struct {
	cmd     *exec.Cmd
	sandbox *bookingtest.Sandbox
	api     *http.Server
	apiURL  string
	sl      *slacktest.Server
	startup time.Duration
	stderr  *strings.Builder
	stats   *http.Client // the -serve-bot child's stats endpoint
}

// emptyDatabase drops everything in the database's public schema, so the
// start begins with no journal, as with a fresh state directory.
func emptyDatabase(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url) // takes the pool_ settings bookbot does
	if err != nil {
		return fmt.Errorf("-database: %w", err)
	}
	defer pool.Close()
	_, err = pool.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public")
	return err
}

func start(ctx context.Context, argv []string, dir string, env ...string) (*proc, error) {
	return startPeople(ctx, argv, dir, nil, env...)
}

// startPeople is start with more people known to the Slack stand-in. An
// env entry overrides the default of the same name.
func startPeople(ctx context.Context, argv []string, dir string, people []slacktest.User, env ...string) (*proc, error) {
	return startWith(ctx, argv, dir, people, nil, env...)
}

// startWith is startPeople with the sandbox given to setup (when not nil)
// before the bot starts.
func startWith(ctx context.Context, argv []string, dir string, people []slacktest.User, setup func(*bookingtest.Sandbox), env ...string) (*proc, error) {
	p := &proc{sandbox: bookingtest.New(bookingtest.Options{Seed: true}), stderr: &strings.Builder{}}
	p.sandbox.SetLimits(100000, 100000) // measure bookbot, not the API's limits
	if setup != nil {
		setup(p.sandbox)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.api = &http.Server{Handler: p.sandbox, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.api.Serve(ln) }()
	p.apiURL = "http://" + ln.Addr().String()
	p.sl = slacktest.New(slacktest.Options{})
	p.sl.AddUser(slacktest.User{ID: user, Name: "perf", RealName: "Perf Person", TZ: "Europe/Berlin"})
	for _, u := range people {
		p.sl.AddUser(u)
	}

	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append([]string{
		"HOME=" + dir,
		"BOOKING_BASE_URL=" + p.apiURL,
		"BOOKING_API_KEY=" + bookingtest.DemoKey,
		"SLACK_BOT_TOKEN=" + p.sl.BotToken(),
		"SLACK_APP_TOKEN=" + p.sl.AppToken(),
		"SLACK_API_URL=" + p.sl.APIURL,
		"BOOKBOT_ALLOWED_USERS=" + user,
		"BOOKBOT_STATE_DIR=" + filepath.Join(dir, "state"),
		"BOOKBOT_HTTP_ADDR=off",
		"LOG_LEVEL=warn",
		"GODEBUG=" + os.Getenv("PERF_GODEBUG"),
	}, env...) // later entries win
	if gc := os.Getenv("PERF_GOGC"); gc != "" {
		p.cmd.Env = append(p.cmd.Env, "GOGC="+gc) // to see the garbage collector's trade-off
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	began := time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := p.sl.WaitConnected(wait); err != nil {
		p.stop()
		return nil, fmt.Errorf("bookbot did not connect: %v\n%s", err, p.stderr)
	}
	p.startup = time.Since(began)
	return p, nil
}

func (p *proc) stop() {
	if os.Getenv("PERF_GODEBUG") != "" {
		fmt.Fprintln(os.Stderr, p.stderr)
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.sl.Close()
	_ = p.api.Close()
}

// resident is a process's resident set and its two parts: anonymous memory
// (the Go heap, stacks, the runtime's own structures) and file-backed pages
// (the executable's code and read-only data, paged in as they are used).
type resident struct{ rss, anon, file int64 }

func (p *proc) memSnap() resident {
	pid := p.cmd.Process.Pid
	return resident{statusField(pid, "VmRSS"), statusField(pid, "RssAnon"), statusField(pid, "RssFile")}
}

// statusField is a size field of /proc/PID/status in bytes (VmRSS, RssAnon,
// RssFile, VmHWM: the peak), 0 when unknown.
func statusField(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (p *proc) setLatency(d time.Duration) {
	for _, ep := range []string{bookingtest.EndpointEventTypes, bookingtest.EndpointSlots, bookingtest.EndpointListBookings, bookingtest.EndpointCreateBooking, bookingtest.EndpointCancelBooking} {
		p.sandbox.SetLatency(ep, d)
	}
}

// replies counts response_url posts so far.
func (p *proc) replies() int {
	n := 0
	for _, m := range p.sl.Messages() {
		if m.Kind == "response_url" {
			n++
		}
	}
	return n
}

func (p *proc) waitReplies(ctx context.Context, n int) error {
	for {
		changed := p.sl.Changed() // before the count, so no change is missed
		if p.replies() >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d replies arrived: %w\n%s", p.replies(), n, ctx.Err(), p.stderr)
		}
	}
}

// ackBurst sends bursts of n slash commands at once while the API takes a
// second: the first right after start-up (cold: nothing cached, goroutine
// stacks and connections not yet grown), then three more, measured together.
func (p *proc) ackBurst(ctx context.Context, n int) ([]figure, error) {
	p.setLatency(time.Second)
	defer p.setLatency(0)
	cold, err := p.burst(ctx, n)
	if err != nil {
		return nil, err
	}
	var warm []time.Duration
	for range 3 {
		d, err := p.burst(ctx, n)
		if err != nil {
			return nil, err
		}
		warm = append(warm, d...)
	}
	p99 := pct(warm, 99)
	return []figure{
		{name: fmt.Sprintf("ack latency, first burst of %d, p50 / p99 / max", n), value: spread(cold), target: "reported", ok: true},
		{name: fmt.Sprintf("ack latency, 3 more bursts of %d, p50 / max", n), value: ms(pct(warm, 50)) + " / " + ms(pct(warm, 100)), target: "reported", ok: true},
		{name: fmt.Sprintf("ack latency, 3 more bursts of %d, p99", n), value: ms(p99), target: "≤ 15 ms", ok: p99 <= 15*time.Millisecond},
	}, nil
}

// spread is the p50, p99 and maximum of ds.
func spread(ds []time.Duration) string {
	return ms(pct(ds, 50)) + " / " + ms(pct(ds, 99)) + " / " + ms(pct(ds, 100))
}

// foreign makes the ack bursts come from another workspace: the bot acks
// them and starts nothing, which shows what the work an envelope starts
// costs the acks after it.
var foreign bool

// burst sends n slash commands at once and waits for all their replies.
func (p *proc) burst(ctx context.Context, n int) ([]time.Duration, error) {
	cmd := slacktest.SlashCommand{Command: "/booking", Text: "list", UserID: user}
	if foreign {
		cmd.TeamID = "TFOREIGN"
	}
	before := p.replies()
	// The stand-ins keep every message and call; their collector clears
	// the last burst's before this one, not during it on the bot's CPUs.
	runtime.GC()
	delays := make([]time.Duration, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ack, err := p.sl.SendSlashCommand(ctx, cmd)
			if err != nil {
				errs <- err
				return
			}
			delays[i] = ack.Delay
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if foreign {
		return delays, nil
	}
	if err := p.waitReplies(wait, before+n); err != nil {
		return nil, err
	}
	return delays, nil
}

// modalLatency measures /booking new → views.open while the API takes 2 s.
func (p *proc) modalLatency(ctx context.Context, n int) (figure, error) {
	p.setLatency(2 * time.Second)
	defer p.setLatency(0)
	opens := func() int { return countCalls(p.sl, "views.open") }
	updates := countCalls(p.sl, "views.update")
	var took []time.Duration
	for range n {
		before := opens()
		began := time.Now()
		if _, err := p.sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new intro-call", UserID: user}); err != nil {
			return figure{}, err
		}
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		calls, err := p.sl.WaitCalls(wait, "views.open", before+1)
		cancel()
		if err != nil {
			return figure{}, err
		}
		took = append(took, calls[len(calls)-1].At.Sub(began))
	}
	// Let every form finish loading (one views.update each, 2 s after its
	// views.open), so that the next measurement starts with the bot idle.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := p.sl.WaitCalls(wait, "views.update", updates+n); err != nil {
		return figure{}, fmt.Errorf("the forms did not finish loading: %w", err)
	}
	p99 := pct(took, 99)
	return figure{name: fmt.Sprintf("modal latency p99 (%d opens in a row, API at 2 s)", n), value: ms(p99) + " (p50 " + ms(pct(took, 50)) + ")", target: "≤ 300 ms", ok: p99 <= 300*time.Millisecond}, nil
}

// modalBurst sends n `/booking new intro-call` at once while the API takes
// 2 s, and times each from its envelope going onto the WebSocket to the
// stand-in receiving the views.open made with its trigger_id. It then waits
// for the n forms to finish loading, so that the next measurement starts
// with the bot idle.
func (p *proc) modalBurst(ctx context.Context, n int) ([]time.Duration, error) {
	p.setLatency(2 * time.Second)
	defer p.setLatency(0)
	updates := countCalls(p.sl, "views.update")
	sent := make(map[string]time.Time, n) // by trigger_id
	var mu sync.Mutex
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			ack, err := p.sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new intro-call", UserID: user})
			if err == nil {
				var env struct {
					Payload struct {
						TriggerID string `json:"trigger_id"`
					} `json:"payload"`
				}
				err = json.Unmarshal(ack.Envelope, &env)
				mu.Lock()
				sent[env.Payload.TriggerID] = ack.Sent
				mu.Unlock()
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var took []time.Duration
	for len(took) < n {
		changed := p.sl.Changed()
		took = took[:0]
		for _, c := range p.sl.Calls() {
			var body struct {
				TriggerID string `json:"trigger_id"`
			}
			if c.Method != "views.open" || json.Unmarshal(c.JSON, &body) != nil {
				continue
			}
			if at, ok := sent[cmp.Or(body.TriggerID, c.Form.Get("trigger_id"))]; ok {
				took = append(took, c.Received.Sub(at))
			}
		}
		if len(took) >= n {
			break
		}
		select {
		case <-changed:
		case <-wait.Done():
			return nil, fmt.Errorf("%d of %d views.open arrived: %w", len(took), n, wait.Err())
		}
	}
	if _, err := p.sl.WaitCalls(wait, "views.update", updates+n); err != nil {
		return nil, fmt.Errorf("the forms did not finish loading: %w", err)
	}
	return took, nil
}

func countCalls(sl *slacktest.Server, method string) int {
	n := 0
	for _, c := range sl.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}

// overhead books through bookbot (submit → outcome shown) and makes the
// same three requests raw. bookbot's guard allows 5 creates a minute, so
// five of each are measured.
func (p *proc) overhead(ctx context.Context) ([]figure, error) {
	const rounds = 5
	var through, raw []time.Duration
	for i := range rounds {
		before := countCalls(p.sl, "views.open")
		if _, err := p.sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new deep-dive", UserID: user}); err != nil {
			return nil, err
		}
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := p.sl.WaitCalls(wait, "views.open", before+1); err != nil {
			return nil, err
		}
		// The newest modal, once its times are loaded.
		newest := ""
		for _, v := range p.sl.Views() {
			if v.Type == "modal" {
				newest = v.ID
			}
		}
		v, err := p.sl.WaitView(wait, func(v slacktest.View) bool {
			return v.ID == newest && len(v.Options("slot")) > 0
		})
		if err != nil {
			last, _ := p.sl.View(newest)
			return nil, fmt.Errorf("the form did not load its times: %w\n%s", err, last.Blocks)
		}
		slot := v.Options("slot")[0].Value // fresh from GET /slots, so free
		updates := countCalls(p.sl, "views.update")
		began := time.Now()
		if _, err := p.sl.SubmitInputs(ctx, user, v.ID, map[string]string{"slot": slot, "name": "Perf Attendee", "email": fmt.Sprintf("perf%d@example.com", i)}); err != nil {
			return nil, err
		}
		if _, err := p.sl.WaitView(wait, func(x slacktest.View) bool {
			return x.ID == v.ID && strings.Contains(string(x.Blocks), "Booked.")
		}); err != nil {
			last, _ := p.sl.View(v.ID)
			return nil, fmt.Errorf("no booking confirmed: %w\n%s\n%s", err, last.Blocks, p.stderr)
		}
		calls, _ := p.sl.WaitCalls(wait, "views.update", updates+1)
		through = append(through, calls[len(calls)-1].At.Sub(began))
		if _, err := p.sl.Cancel(ctx, user, v.ID); err != nil {
			return nil, err
		}

		d, err := rawCreateVerify(ctx, p.apiURL, i)
		if err != nil {
			return nil, err
		}
		raw = append(raw, d)
	}
	t50, r50 := pct(through, 50), pct(raw, 50)
	return []figure{
		{name: "booking through bookbot p50 (submit → outcome)", value: ms(t50), target: "reported", ok: true},
		{name: "the same GET + POST + GET made raw, p50", value: ms(r50), target: "reported", ok: true},
		{name: "bookbot overhead on a booking, p50", value: ms(t50 - r50), target: "≤ 5 ms", ok: t50-r50 <= 5*time.Millisecond,
			note: "includes the ack round trip and the views.update that shows the outcome"},
	}, nil
}

// rawCreateVerify books a consultation slot with net/http alone: POST
// /bookings between two GET /bookings (the check that the booking does not
// exist yet, and the verification), as bookbot does. It returns the time of
// the three requests only.
func rawCreateVerify(ctx context.Context, base string, i int) (time.Duration, error) {
	h := &http.Client{Timeout: 10 * time.Second}
	call := func(method, path string, form url.Values) ([]byte, error) {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, base+"/api/v1/"+path, body)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+bookingtest.DemoKey)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := h.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return nil, fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
		}
		return b, err
	}
	b, err := call("GET", "slots?event_type=consultation", nil)
	if err != nil {
		return 0, err
	}
	var slots struct {
		Slots []struct{ Start, End string } `json:"slots"`
	}
	if err := json.Unmarshal(b, &slots); err != nil || len(slots.Slots) <= 2*i {
		return 0, errors.New("no consultation slots to book")
	}
	s := slots.Slots[2*i]
	began := time.Now()
	if _, err := call("GET", "bookings", nil); err != nil {
		return 0, err
	}
	if _, err := call("POST", "bookings", url.Values{"event_type": {"consultation"}, "start": {s.Start}, "end": {s.End},
		"name": {"Raw Attendee"}, "email": {fmt.Sprintf("raw%d@example.com", i)}, "booker_tz": {"Europe/Berlin"}}); err != nil {
		return 0, err
	}
	if _, err := call("GET", "bookings", nil); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

// interactions makes n interactions, one after another as their acks
// come, and waits until all they started is done. Of every ten: four
// `/booking list`, `types`, `slots intro-call`, `new intro-call` (a modal
// that is never closed, the worst case for what the bot keeps per modal),
// an App Home opening and two `help` (answered in the ack).
func (p *proc) interactions(ctx context.Context, n int) error {
	replies, publishes, opens, updates := p.replies(), countCalls(p.sl, "views.publish"), countCalls(p.sl, "views.open"), countCalls(p.sl, "views.update")
	for i := range n {
		var err error
		slash := func(text string) {
			_, err = p.sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: text, UserID: user})
		}
		switch i % 10 {
		case 0, 1, 2, 3:
			slash("list")
			replies++
		case 4:
			slash("types")
			replies++
		case 5:
			slash("slots intro-call")
			replies++
		case 6:
			slash("new intro-call")
			opens++
			updates++ // the form once its times are loaded
		case 7:
			_, err = p.sl.OpenAppHome(ctx, user)
			publishes++
		default:
			slash("help")
		}
		if err != nil {
			return err
		}
	}
	if err := p.waitReplies(ctx, replies); err != nil {
		return err
	}
	for method, n := range map[string]int{"views.publish": publishes, "views.open": opens, "views.update": updates} {
		if _, err := p.sl.WaitCalls(ctx, method, n); err != nil {
			return fmt.Errorf("%s: %w\n%s", method, err, p.stderr)
		}
	}
	return nil
}

// memory makes n interactions, waits until they are answered and the heap
// settles, and compares the resident set with the one after start.
func (p *proc) memory(ctx context.Context, n int, rss0 resident) (figure, error) {
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := p.interactions(wait, n); err != nil {
		return figure{}, err
	}
	// An idle Go process collects at least every two minutes; the heap
	// goal then shrinks and the scavenger hands pages back to the OS. Wait
	// for that (up to 150 s), as an idle bot between bursts would.
	peak := p.memSnap()
	rss, settled := peak, time.Now()
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline) && float64(rss.rss) > 1.1*float64(rss0.rss); {
		select {
		case <-ctx.Done():
			return figure{}, ctx.Err()
		case <-time.After(time.Second):
		}
		rss = p.memSnap()
	}
	waited := time.Since(settled).Round(time.Second)
	return figure{
		name:   fmt.Sprintf("resident set after %d interactions", n),
		value:  fmt.Sprintf("%s (%+.0f%%)", mb(rss.rss), 100*(float64(rss.rss)/float64(rss0.rss)-1)),
		target: "≤ +10%", ok: rss0.rss > 0 && float64(rss.rss) <= 1.1*float64(rss0.rss),
		note: fmt.Sprintf("measured %v after the last answer (%s then); anonymous %s → %s (%+.0f%%), file-backed %s → %s",
			waited, mb(peak.rss), mb(rss0.anon), mb(rss.anon), 100*(float64(rss.anon)/float64(rss0.anon)-1), mb(rss0.file), mb(rss.file)),
	}, nil
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
func mb(b int64) string         { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
