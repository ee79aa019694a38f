package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
)

// inproc is the bot running in this process, for what cannot be seen from
// outside: goroutine counts and CPU profiles.
type inproc struct {
	sl                     *slacktest.Server
	sandbox                *bookingtest.Sandbox
	bot                    *bot.Bot
	bookingHTTP, slackHTTP *http.Client
	close                  func()
}

func startInProcess(ctx context.Context) (*inproc, error) {
	p := &inproc{sandbox: bookingtest.New(bookingtest.Options{Seed: true})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	api := &http.Server{Handler: p.sandbox, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = api.Serve(ln) }()
	p.sl = slacktest.New(slacktest.Options{})
	p.sl.AddUser(slacktest.User{ID: user, Name: "perf", TZ: "Europe/Berlin"})

	p.bookingHTTP = &http.Client{Timeout: 30 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	p.slackHTTP = &http.Client{Timeout: 30 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	key, err := booking.NewKey(bookingtest.DemoKey)
	if err != nil {
		return nil, err
	}
	client, err := booking.NewClient("http://"+ln.Addr().String(), key, booking.WithHTTPClient(p.bookingHTTP))
	if err != nil {
		return nil, err
	}
	slackAPI := slack.New(p.sl.BotToken(), slack.OptionAPIURL(p.sl.APIURL), slack.OptionAppLevelToken(p.sl.AppToken()), slack.OptionHTTPClient(p.slackHTTP))
	p.bot = bot.New(bot.Config{Allowed: func(id string) bool { return id == user }, TeamID: p.sl.TeamID(), HTTPClient: p.slackHTTP}, client, slackAPI)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.bot.Run(runCtx, socketmode.New(slackAPI), 10*time.Second) }()
	p.close = func() { stop(); <-done; p.sl.Close(); _ = api.Close() }
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := p.sl.WaitConnected(wait); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// goroutines makes n interactions with the in-process bot and checks the
// goroutine count returns to where it was once the work is done and idle
// connections are closed.
func goroutines(ctx context.Context, n int) (figure, error) {
	p, err := startInProcess(ctx)
	if err != nil {
		return figure{}, err
	}
	defer p.close()
	b, sl, bookingHTTP, slackHTTP := p.bot, p.sl, p.bookingHTTP, p.slackHTTP
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	settle := func() (int, error) {
		if err := b.Idle(wait); err != nil {
			return 0, err
		}
		bookingHTTP.CloseIdleConnections()
		slackHTTP.CloseIdleConnections()
		// Closed connections' goroutines end on their own schedule.
		count := runtime.NumGoroutine()
		for range 20 {
			time.Sleep(50 * time.Millisecond)
			runtime.GC()
			count = min(count, runtime.NumGoroutine())
		}
		return count, nil
	}
	// One round first, so caches and pools that live for the process are
	// part of the baseline.
	if _, err := sl.SendSlashCommand(wait, slacktest.SlashCommand{Command: "/booking", Text: "list", UserID: user}); err != nil {
		return figure{}, err
	}
	base, err := settle()
	if err != nil {
		return figure{}, err
	}
	heap0 := liveHeap()
	for i := range n {
		text := []string{"list", "types", "slots intro-call", "help", "new intro-call"}[i%5]
		if _, err := sl.SendSlashCommand(wait, slacktest.SlashCommand{Command: "/booking", Text: text, UserID: user}); err != nil {
			return figure{}, err
		}
	}
	after, err := settle()
	if err != nil {
		return figure{}, err
	}
	return figure{
		name:  fmt.Sprintf("goroutines after %d interactions", n),
		value: fmt.Sprintf("%d (baseline %d)", after, base), target: "= baseline", ok: after <= base,
		note: fmt.Sprintf("in-process bot, idle HTTP connections closed before counting; live heap %s → %s (whole process, stand-ins included)", mb(int64(heap0)), mb(int64(liveHeap()))),
	}, nil
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// profileAcks writes a CPU profile of the in-process bot answering a burst
// of n slash commands, the ack measurement's load.
func profileAcks(ctx context.Context, n int, file string) error {
	p, err := startInProcess(ctx)
	if err != nil {
		return err
	}
	defer p.close()
	for _, ep := range []string{bookingtest.EndpointEventTypes, bookingtest.EndpointListBookings} {
		p.sandbox.SetLatency(ep, time.Second)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	defer pprof.StopCPUProfile()
	for range 5 {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				_, _ = p.sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "list", UserID: user})
			})
		}
		wg.Wait()
		if err := p.bot.Idle(ctx); err != nil {
			return err
		}
	}
	return nil
}
