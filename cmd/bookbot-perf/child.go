package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/cmd/internal/metrics"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/store"
)

// What cannot be seen from outside the bookbot binary (the live heap,
// stacks, goroutines, profiles) is measured in a second process: this
// program re-run with -serve-bot, which starts the bot through the wiring
// `bookbot run` starts it through (app.New and App.Run: configuration from
// the same environment, the write journal, metrics, the scheduled work) and
// adds a stats endpoint on a Unix socket. The stand-ins stay in the parent,
// so the child's heap is the bot's alone. The bot's clock (app.Deps.Now) can
// be moved forward, so that its time windows can be seen to close without
// waiting for them.

// statsSockEnv names the Unix socket the -serve-bot child serves stats on;
// with exactEnv set, its heap profile records every allocation.
// With contentionEnv set, it records where goroutines block and wait for
// locks.
const (
	statsSockEnv  = "PERF_STATS_SOCK"
	exactEnv      = "PERF_EXACT_HEAP_PROFILE"
	contentionEnv = "PERF_CONTENTION_PROFILES"
)

// runtimeStats is what the child reports of itself.
type runtimeStats struct {
	HeapAlloc    uint64 // live heap (right after a full collection when settled)
	HeapInuse    uint64 // bytes in in-use spans (live heap + fragmentation)
	HeapIdle     uint64 // bytes in idle spans, returned to the OS or not
	HeapReleased uint64 // idle bytes returned to the OS
	StackInuse   uint64 // goroutine stacks
	Sys          uint64 // everything the runtime has mapped
	NextGC       uint64 // the heap goal
	RuntimeSys   uint64 // the runtime's own structures: spans, GC metadata, caches
	Goroutines   int
	RSS, Anon    int64 // VmRSS, RssAnon
}

// retained is the heap memory the process holds from the OS.
func (s runtimeStats) retained() uint64 { return s.HeapInuse + s.HeapIdle - s.HeapReleased }

// serveBot is the -serve-bot child.
func serveBot(ctx context.Context) error {
	if os.Getenv(exactEnv) != "" {
		runtime.MemProfileRate = 1
	}
	if os.Getenv(contentionEnv) != "" {
		runtime.SetBlockProfileRate(int(10 * time.Microsecond)) // a sample every 10 µs blocked
		runtime.SetMutexProfileFraction(1)
	}
	cfg, err := config.Load(os.Getenv, config.NeedAll)
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg, os.Stderr)
	var ahead atomic.Int64 // how far the bot's clock is moved forward
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	// The state as `bookbot run` opens it, holding the directory until the
	// process ends.
	st, err := store.Open(ctx, store.Options{StateDir: cfg.StateDir, DatabaseURL: cfg.DatabaseURL, Migrate: true, Now: now, Log: log})
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := app.New(ctx, app.Deps{
		Config: cfg, State: st, Metrics: metrics.New(), Log: log, Version: "perf", Now: now,
	})
	if err != nil {
		return err
	}
	b := a.Bot

	ln, err := net.Listen("unix", os.Getenv(statsSockEnv))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// GET /stats: after the bot is idle, idle HTTP connections are closed
	// (the booking client's and http.DefaultTransport's) and the heap
	// collected.
	// GET /stats?as=is reads the figures as they are, collecting nothing.
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("as") == "is" {
			_ = json.NewEncoder(w).Encode(readStats(runtime.NumGoroutine()))
			return
		}
		if err := b.Idle(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(settledStats(a))
	})
	mux.HandleFunc("POST /clock", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("advance"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ahead.Add(int64(d))
	})
	mux.HandleFunc("GET /heap", func(w http.ResponseWriter, r *http.Request) {
		if err := b.Idle(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		settledStats(a)
		_ = pprof.Lookup("heap").WriteTo(w, 0)
	})
	mux.HandleFunc("GET /profile/{name}", func(w http.ResponseWriter, r *http.Request) {
		prof := pprof.Lookup(r.PathValue("name"))
		if prof == nil {
			http.NotFound(w, r)
			return
		}
		_ = prof.WriteTo(w, 0)
	})
	var cpu bytes.Buffer
	mux.HandleFunc("POST /cpu/start", func(w http.ResponseWriter, r *http.Request) {
		cpu.Reset()
		if err := pprof.StartCPUProfile(&cpu); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
		}
	})
	mux.HandleFunc("POST /cpu/stop", func(w http.ResponseWriter, r *http.Request) {
		pprof.StopCPUProfile()
		_, _ = w.Write(cpu.Bytes())
	})
	stats := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = stats.Serve(ln) }()
	defer stats.Close()
	return a.Run(ctx)
}

// settledStats closes idle HTTP connections (the app's, to the booking
// API and Slack, and http.DefaultTransport's), waits until the goroutine
// count has held still for half a second, collects the heap twice (the
// second empties what sync.Pools kept through the first) and reads the
// runtime's figures. Closed connections' goroutines end on their own
// schedule and nothing says when: the count is looked at every 50 ms until
// ten looks agree (5 s at most).
func settledStats(a *app.App) runtimeStats {
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	a.CloseIdleConnections()
	g, still := runtime.NumGoroutine(), 0
	look := time.NewTicker(50 * time.Millisecond)
	defer look.Stop()
	for deadline := time.Now().Add(5 * time.Second); still < 10 && time.Now().Before(deadline); {
		<-look.C
		if n := runtime.NumGoroutine(); n == g {
			still++
		} else {
			g, still = n, 0
		}
	}
	runtime.GC()
	runtime.GC()
	return readStats(g)
}

func readStats(goroutines int) runtimeStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	pid := os.Getpid()
	return runtimeStats{
		HeapAlloc: m.HeapAlloc, HeapInuse: m.HeapInuse, HeapIdle: m.HeapIdle, HeapReleased: m.HeapReleased,
		StackInuse: m.StackInuse, Sys: m.Sys, NextGC: m.NextGC, Goroutines: goroutines,
		RuntimeSys: m.MSpanSys + m.MCacheSys + m.BuckHashSys + m.GCSys + m.OtherSys,
		RSS:        statusField(pid, "VmRSS"), Anon: statusField(pid, "RssAnon"),
	}
}

// startChild starts this program as the -serve-bot child against fresh
// stand-ins.
func startChild(ctx context.Context, dir string, env ...string) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "stats.sock")
	_ = os.Remove(sock)
	p, err := start(ctx, []string{self, "-serve-bot"}, dir, append(env, statsSockEnv+"="+sock)...)
	if err != nil {
		return nil, err
	}
	p.stats = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	return p, nil
}

// call asks the child's stats endpoint.
func (p *proc) call(ctx context.Context, method, path string) ([]byte, error) {
	if p.stats == nil {
		return nil, errors.New("not a -serve-bot child")
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://bot"+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.stats.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	return b, err
}

func (p *proc) runtimeStats(ctx context.Context, query string) (runtimeStats, error) {
	var s runtimeStats
	b, err := p.call(ctx, "GET", "/stats"+query)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

// windows is how far the bot's clock is moved so that everything it keeps
// for a while has expired: envelopes (15 min), user zones (1 h), a modal's
// pick of event (2 h).
const windows = 2*time.Hour + time.Minute

// runtimeFigures measures the -serve-bot child: its live heap, heap in use
// and goroutines after start, after a first round of each kind of
// interaction (what lives as long as the process is then in place: JSON
// encoders, time zone data, pooled connections' structures), after n
// interactions, and after the bot's time windows have passed and one more
// round has made it sweep. The heap profiles after the first round and after the
// n interactions go to memprofile.base and memprofile when set, the one
// once the windows have passed to memprofile.later.
func runtimeFigures(ctx context.Context, dir string, n int, memprofile string) ([]figure, error) {
	var env []string
	if memprofile != "" {
		env = append(env, exactEnv+"=1")
	}
	p, err := startChild(ctx, dir, env...)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	wait, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	started, err := p.runtimeStats(wait, "")
	if err != nil {
		return nil, err
	}
	// stage makes n interactions, reads the figures once the bot is idle
	// and, with -memprofile, saves a heap profile to file.
	stage := func(n int, file string) (runtimeStats, error) {
		if err := p.interactions(wait, n); err != nil {
			return runtimeStats{}, err
		}
		s, err := p.runtimeStats(wait, "")
		if err != nil || memprofile == "" {
			return s, err
		}
		return s, p.saveHeap(wait, file)
	}
	warm, err := stage(10, memprofile+".base")
	if err != nil {
		return nil, err
	}
	after, err := stage(n, memprofile)
	if err != nil {
		return nil, err
	}
	if _, err := p.call(wait, "POST", "/clock?advance="+windows.String()); err != nil {
		return nil, err
	}
	later, err := stage(10, memprofile+".later")
	if err != nil {
		return nil, err
	}

	grow := func(a, b uint64) string { return fmt.Sprintf("%+.0f%%", 100*(float64(b)/float64(a)-1)) }
	heap := func(s runtimeStats) string { return mb(int64(s.HeapAlloc)) }
	return []figure{
		{name: "live heap after start / after one of each", value: heap(started) + " / " + heap(warm), target: "reported", ok: true,
			note: fmt.Sprintf("HeapInuse %s / %s, stacks %s / %s", mb(int64(started.HeapInuse)), mb(int64(warm.HeapInuse)), mb(int64(started.StackInuse)), mb(int64(warm.StackInuse)))},
		{name: fmt.Sprintf("live heap after %d more interactions", n), value: fmt.Sprintf("%s (%s)", heap(after), grow(warm.HeapAlloc, after.HeapAlloc)), target: "reported", ok: true,
			note: fmt.Sprintf("HeapInuse %s (%s); what the bot keeps for a while (envelopes 15 min, modals' slots 15 min) is still there", mb(int64(after.HeapInuse)), grow(warm.HeapInuse, after.HeapInuse))},
		{name: "live heap once the bot's windows passed", value: fmt.Sprintf("%s (%s)", heap(later), grow(warm.HeapAlloc, later.HeapAlloc)), target: "≤ +10%", ok: float64(later.HeapAlloc) <= 1.1*float64(warm.HeapAlloc),
			note: fmt.Sprintf("bot clock moved %v and one more round made; HeapInuse %s (%s), stacks %s; against the live heap after one of each", windows, mb(int64(later.HeapInuse)), grow(warm.HeapInuse, later.HeapInuse), mb(int64(later.StackInuse)))},
		{name: fmt.Sprintf("goroutines after %d interactions", n),
			value: fmt.Sprintf("%d (baseline %d)", after.Goroutines, started.Goroutines), target: "= baseline", ok: after.Goroutines <= started.Goroutines && later.Goroutines <= started.Goroutines,
			note: fmt.Sprintf("after start, with idle HTTP connections closed; %d once the windows passed", later.Goroutines)},
	}, nil
}

// settleFigures replays, in the -serve-bot child, the load the bookbot
// binary has had when its resident set is measured (the ack bursts, then
// the interactions), waits d idle as that measurement does, and reports
// what the runtime then keeps from the OS next to what it kept after start,
// without collecting anything itself.
func settleFigures(ctx context.Context, dir string, burst, n int, d time.Duration) ([]figure, error) {
	p, err := startChild(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	wait, cancel := context.WithTimeout(ctx, 5*time.Minute+d)
	defer cancel()
	started, err := p.runtimeStats(wait, "?as=is")
	if err != nil {
		return nil, err
	}
	p.setLatency(time.Second)
	for range 4 {
		if _, err := p.burst(wait, burst); err != nil {
			return nil, err
		}
	}
	p.setLatency(0)
	if err := p.interactions(wait, n); err != nil {
		return nil, err
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	idle, err := p.runtimeStats(wait, "?as=is")
	if err != nil {
		return nil, err
	}
	kept := func(s runtimeStats) string {
		return fmt.Sprintf("heap kept %s (HeapInuse %s + idle not released %s; released %s; live ≤ %s, goal %s), stacks %s, runtime structures %s (mapped), RssAnon %s",
			mb(int64(s.retained())), mb(int64(s.HeapInuse)), mb(int64(s.HeapIdle-s.HeapReleased)), mb(int64(s.HeapReleased)), mb(int64(s.HeapAlloc)), mb(int64(s.NextGC)),
			mb(int64(s.StackInuse)), mb(int64(s.RuntimeSys)), mb(s.Anon))
	}
	return []figure{{
		name:  fmt.Sprintf("heap kept from the OS, %v idle", d),
		value: fmt.Sprintf("%s (after start %s)", mb(int64(idle.retained())), mb(int64(started.retained()))), target: "reported", ok: true,
		note: fmt.Sprintf("4 bursts of %d and %d interactions, as the binary had, then %v idle\n    after start: %s\n    idle:        %s", burst, n, d, kept(started), kept(idle)),
	}}, nil
}

func (p *proc) saveHeap(ctx context.Context, file string) error {
	b, err := p.call(ctx, "GET", "/heap")
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// profileBursts writes profiles of the -serve-bot child answering five
// bursts of the given kind, with the stand-ins in another process: "ack",
// n slash commands while the booking API takes a second (the ack
// measurement's load), or "modal", n `/booking new` while it takes 2 s.
// file gets the CPU profile, file.heap the heap's (its alloc_space is what
// the bursts allocated, start-up aside), file.block and file.mutex where
// goroutines waited.
func profileBursts(ctx context.Context, dir, kind string, n int, file string) error {
	p, err := startChild(ctx, dir, contentionEnv+"=1")
	if err != nil {
		return err
	}
	defer p.stop()
	dialled := p.sl.Dialled()
	if _, err := p.call(ctx, "POST", "/cpu/start"); err != nil {
		return err
	}
	var standIn bytes.Buffer // the Slack stand-in and booking API sandbox: this process
	if err := pprof.StartCPUProfile(&standIn); err != nil {
		return err
	}
	defer pprof.StopCPUProfile() // when a burst fails; a second stop does nothing
	var delays []time.Duration
	for range 5 {
		var d []time.Duration
		if kind == "modal" {
			d, err = p.modalBurst(ctx, n)
		} else {
			p.setLatency(time.Second)
			d, err = p.burst(ctx, n)
		}
		if err != nil {
			return err
		}
		delays = append(delays, d...)
	}
	pprof.StopCPUProfile()
	prof, err := p.call(ctx, "POST", "/cpu/stop")
	if err != nil {
		return err
	}
	if err := os.WriteFile(file+".standin", standIn.Bytes(), 0o644); err != nil {
		return err
	}
	what := map[string]string{"ack": "ack latency", "modal": "envelope → views.open"}[kind]
	fmt.Printf("%s while profiling, %d bursts of %d: p50 / p99 / max %s; connections dialled to the Slack stand-in: %d\n",
		what, 5, n, spread(delays), p.sl.Dialled()-dialled)
	if err := os.WriteFile(file, prof, 0o644); err != nil {
		return err
	}
	for _, name := range []string{"heap", "block", "mutex"} {
		b, err := p.call(ctx, "GET", "/profile/"+name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(file+"."+name, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
