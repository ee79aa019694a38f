package pg_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store/pg/pgtest"
)

const leaderName = "singletons"

// fast is the timing of most tests: check 250 ms, lost after 1.5 s.
func fast(replica string) pg.LeaderOptions {
	return pg.LeaderOptions{Replica: replica, Check: 250 * time.Millisecond, LostAfter: 1500 * time.Millisecond}
}

// fifth is the default timing made five times shorter (check 1 s, lost
// after 3 s): as with the defaults, LostAfter is at its least, 3 × Check,
// where a leader cut off has the least time to stop before the server ends
// its session. The defaults themselves would wait 20 s on the server's
// idle_session_timeout, a clock no test can move; a fifth still tells a
// bound from twice it, beyond slack.
func fifth(replica string) pg.LeaderOptions {
	return pg.LeaderOptions{Replica: replica, Check: pg.DefaultLeaderCheck / 5, LostAfter: pg.DefaultLeaderLostAfter / 5}
}

// slack is what a bound may be overshot by on a busy machine, under the
// race detector.
const slack = time.Second

// term is one lead call, as the test saw it.
type term struct {
	replica    string
	token      int64
	start, end time.Time // end is when its context was seen done
}

// terms records every lead call of the test's leaders.
type terms struct {
	t       *testing.T
	mu      sync.Mutex
	all     []term
	started chan term
	ended   chan term
}

func newTerms(t *testing.T) *terms {
	return &terms{t: t, started: make(chan term, 100), ended: make(chan term, 100)}
}

// lead is a lead function that leads until its context is done.
func (r *terms) lead(replica string) func(context.Context, pg.Term) {
	return func(ctx context.Context, tm pg.Term) {
		rec := term{replica: replica, token: tm.Token, start: time.Now()}
		if tm.Since.IsZero() || tm.Since.Location() != time.UTC {
			r.t.Errorf("term %d: Since %v, want a UTC time", tm.Token, tm.Since)
		}
		r.started <- rec
		<-ctx.Done()
		rec.end = time.Now()
		r.mu.Lock()
		r.all = append(r.all, rec)
		r.mu.Unlock()
		r.ended <- rec
	}
}

// next waits for the next term to start or end.
func next(t *testing.T, c chan term, what string, within time.Duration) term {
	t.Helper()
	select {
	case tm := <-c:
		return tm
	case <-time.After(within):
		t.Fatalf("no term %s within %v", what, within)
		return term{}
	}
}

// none checks that no term starts or ends for d.
func none(t *testing.T, c chan term, what string, d time.Duration) {
	t.Helper()
	select {
	case tm := <-c:
		t.Fatalf("term %d of %s %s", tm.token, tm.replica, what)
	case <-time.After(d):
	}
}

// noneBeside checks that for d no term starts beside the one leading, and
// returns the last term that started, if any did. Under load a leader can
// miss its lease and step down: its lead is told to stop before its lock
// is given back, and a term that starts then is not beside it.
func (r *terms) noneBeside(t *testing.T, d time.Duration) (last term) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case tm := <-r.started:
			select {
			case e := <-r.ended:
				t.Logf("term %d of %s ended, and term %d of %s started: a lease lapsed", e.token, e.replica, tm.token, tm.replica)
				last = tm
			case <-time.After(slack):
				t.Fatalf("term %d of %s started beside the leader", tm.token, tm.replica)
			}
		case <-deadline:
			return last
		}
	}
}

// check verifies the terms ended so far: none overlapped, and their tokens
// grew by one.
func (r *terms) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	all := slices.Clone(r.all)
	slices.SortFunc(all, func(a, b term) int { return a.start.Compare(b.start) })
	for i := 1; i < len(all); i++ {
		if all[i].start.Before(all[i-1].end) {
			t.Errorf("term %d of %s began %v before term %d of %s ended",
				all[i].token, all[i].replica, all[i-1].end.Sub(all[i].start), all[i-1].token, all[i-1].replica)
		}
		if all[i].token != all[i-1].token+1 {
			t.Errorf("term %d follows term %d", all[i].token, all[i-1].token)
		}
	}
}

// running is a call in the background (a Leader's Run, a Listen) until
// its context is cancelled.
type running struct {
	what   string // the call, in failures
	cancel context.CancelFunc
	done   chan error
}

// background runs fn, stopped when the test ends if not before.
func background(t *testing.T, what string, fn func(context.Context) error) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{what: what, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- fn(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func run(t *testing.T, l *pg.Leader, lead func(context.Context, pg.Term)) *running {
	return background(t, "Run", func(ctx context.Context) error { return l.Run(ctx, lead) })
}

// stop cancels the call and returns its error.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	return r.wait(t, 10*time.Second)
}

func (r *running) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the next stop
		return err
	case <-time.After(within):
		t.Fatalf("%s did not return within %v", r.what, within)
		return nil
	}
}

func whoLeads(t *testing.T, db *pg.DB) pg.LeaderInfo {
	t.Helper()
	info, err := db.WhoLeads(t.Context(), leaderName)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// goroutines waits until no more goroutines run than before, or fails.
// pgx closes a connection whose query was cancelled in goroutines of its own,
// bounded by its own 15 s; those are not Run's and are not counted.
func goroutines(t *testing.T, before int) {
	t.Helper()
	var g []string
	defer func() {
		if len(g) > before { // the wait failed: what runs still
			t.Logf("%d goroutines, %d before:\n%s", len(g), before, strings.Join(g, "\n\n"))
		}
	}()
	testutil.WaitFor(t, 5*time.Second, "no more goroutines than before", func() bool { g = ours(); return len(g) <= before })
}

// ours is the stack of each running goroutine but pgx's closing ones.
func ours() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var g []string
	for _, s := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(s, "pgconn.(*PgConn).asyncClose") && !strings.Contains(s, "puddle/v2.(*Pool[...]).destroyAcquiredResource") {
			g = append(g, s)
		}
	}
	return g
}

// campaigning waits until a leader's session that does not hold the lock
// has tried it: it campaigns, and takes the lock within a check of its
// being given back.
func campaigning(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	var n int
	testutil.WaitFor(t, 5*time.Second, "a leader campaigning", func() bool {
		err := admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity a
			WHERE a.datname = current_database() AND a.application_name = $1
			AND a.state = 'idle' AND a.query LIKE 'SELECT pg_try_advisory_lock(%'
			AND NOT EXISTS (SELECT 1 FROM pg_locks k WHERE k.pid = a.pid AND k.locktype = 'advisory' AND k.granted)`,
			"bookbot leader "+leaderName).Scan(&n)
		if err != nil {
			t.Fatalf("sessions campaigning: %v", err)
		}
		return n > 0
	})
}

// Of two replicas one leads, and goes on leading; WhoLeads names it.
func TestLeaderOne(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	a, b := open(t, u), open(t, u)
	if info := whoLeads(t, a); info != (pg.LeaderInfo{Name: leaderName}) {
		t.Errorf("WhoLeads before any leader: %+v", info)
	}
	r := newTerms(t)
	run(t, a.Leader(leaderName, fast("a")), r.lead("a"))
	run(t, b.Leader(leaderName, fast("b")), r.lead("b"))
	first := next(t, r.started, "starting", 5*time.Second)
	if first.token != 1 {
		t.Errorf("first term %d", first.token)
	}
	cur := first
	if last := r.noneBeside(t, 3*time.Second); last.replica != "" { // a dozen checks
		cur = last
	}
	info := whoLeads(t, b)
	if info.Replica != cur.replica || info.Token != cur.token || !info.Leading ||
		info.Age < 0 || info.Age > fast("").LostAfter+slack || info.Heartbeat.Before(info.Since) {
		t.Errorf("WhoLeads = %+v; want %s leading, term %d, a heartbeat younger than the lease's lost-after", info, cur.replica, cur.token)
	}
}

// A leader that gives up (its context done) lets the other lead within a
// check; leadership comes back the same way; tokens grow; Run leaves no
// goroutine behind.
// Not in parallel with other tests: it counts the goroutines of the process.
func TestLeaderResign(t *testing.T) {
	u := migrated(t)
	a, b := open(t, u), open(t, u)
	if err := a.Ping(t.Context()); err != nil { // the pools' connections are made
		t.Fatal(err)
	}
	if err := b.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := len(ours())
	r := newTerms(t)
	leaders := map[string]*pg.Leader{"a": a.Leader(leaderName, fast("a")), "b": b.Leader(leaderName, fast("b"))}
	runs := map[string]*running{"a": run(t, leaders["a"], r.lead("a"))}
	if tm := next(t, r.started, "starting", 5*time.Second); tm.replica != "a" || tm.token != 1 {
		t.Fatalf("first term: %+v", tm)
	}
	runs["b"] = run(t, leaders["b"], r.lead("b"))
	admin := conn(t, u)
	for i, leader := range []string{"a", "b", "a"} {
		other := map[string]string{"a": "b", "b": "a"}[leader]
		campaigning(t, admin)
		stopped := time.Now()
		if err := runs[leader].stop(t); err != nil {
			t.Errorf("Run after its context was cancelled: %v", err)
		}
		next(t, r.ended, "ending on cancel", time.Second)
		tm := next(t, r.started, "starting after the leader gave up", 250*time.Millisecond+slack)
		t.Logf("%s led %v after %s gave up", tm.replica, tm.start.Sub(stopped), leader)
		if tm.replica != other || tm.token != int64(i+2) {
			t.Errorf("after %s gave up: %s leads term %d; want %s, %d", leader, tm.replica, tm.token, other, i+2)
		}
		if info := whoLeads(t, a); info.Replica != other || info.Token != tm.token || !info.Leading {
			t.Errorf("WhoLeads = %+v", info)
		}
		runs[leader] = run(t, leaders[leader], r.lead(leader)) // campaigns again
	}
	// a campaigns and b leads term 4: a stops first, or it could take a
	// term 5 in the moment between b stopping and a stopping.
	for _, name := range []string{"a", "b"} {
		if err := runs[name].stop(t); err != nil {
			t.Error(err)
		}
	}
	r.check(t)
	if info := whoLeads(t, a); info.Leading || info.Token != 4 {
		t.Errorf("WhoLeads after both stopped = %+v; want term 4, not leading", info)
	}
	goroutines(t, before)
}

// A lead function that returns ends Run, and gives the lock back.
func TestLeaderLeadReturns(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	a, b := open(t, u), open(t, u)
	err := a.Leader(leaderName, fast("a")).Run(t.Context(), func(context.Context, pg.Term) {})
	if err != nil {
		t.Errorf("Run = %v", err)
	}
	if info := whoLeads(t, b); info.Replica != "a" || info.Leading {
		t.Errorf("WhoLeads = %+v; want a's term, ended", info)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var tok int64
	err = b.Leader(leaderName, fast("b")).Run(ctx, func(_ context.Context, tm pg.Term) { tok = tm.Token })
	if err != nil || tok != 2 {
		t.Errorf("the next Run: %v, term %d; want nil, 2", err, tok)
	}
}

// The leader's session ended from the server: it stops at once, and the
// other leads within a check.
func TestLeaderBackendTerminated(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	a, b := open(t, u), open(t, u)
	admin := conn(t, u)
	r := newTerms(t)
	ra := run(t, a.Leader(leaderName, fast("a")), r.lead("a"))
	next(t, r.started, "starting", 5*time.Second)
	run(t, b.Leader(leaderName, fast("b")), r.lead("b"))
	campaigning(t, admin)

	var killed bool
	err := admin.QueryRow(t.Context(), `SELECT pg_terminate_backend(k.pid) FROM pg_locks k, pg_database d
		WHERE k.locktype = 'advisory' AND k.objsubid = 2 AND k.granted
		AND k.database = d.oid AND d.datname = current_database()`).Scan(&killed)
	if err != nil || !killed {
		t.Fatalf("terminate the leader's backend: %v, %v", killed, err)
	}
	at := time.Now()
	ended := next(t, r.ended, "ending", slack)
	started := next(t, r.started, "starting after the leader's session ended", 250*time.Millisecond+slack)
	t.Logf("a stopped %v, b led %v after its session was ended", ended.end.Sub(at), started.start.Sub(at))
	if ended.replica != "a" || started.replica != "b" || started.token != 2 {
		t.Errorf("%s stopped and %s leads term %d; want a, b, 2", ended.replica, started.replica, started.token)
	}
	// a campaigns again, and does not lead beside b.
	r.noneBeside(t, time.Second)
	select {
	case err := <-ra.done:
		t.Fatalf("a's Run returned: %v", err)
	default:
	}
}

// The leader's DB is closed: it stops within a check, its Run says why,
// and the other leads.
func TestLeaderClosed(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	a, b := open(t, u), open(t, u)
	r := newTerms(t)
	ra := run(t, a.Leader(leaderName, fast("a")), r.lead("a"))
	next(t, r.started, "starting", 5*time.Second)
	run(t, b.Leader(leaderName, fast("b")), r.lead("b"))
	campaigning(t, conn(t, u))

	at := time.Now()
	closed := make(chan struct{})
	go func() { a.Close(); close(closed) }()
	ended := next(t, r.ended, "ending", 250*time.Millisecond+slack)
	started := next(t, r.started, "starting after the leader's DB was closed", 500*time.Millisecond+slack)
	t.Logf("a stopped %v, b led %v after a's DB was closed", ended.end.Sub(at), started.start.Sub(at))
	if ended.replica != "a" || started.replica != "b" || started.token != 2 {
		t.Errorf("%s stopped and %s leads term %d; want a, b, 2", ended.replica, started.replica, started.token)
	}
	if err := ra.wait(t, slack); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Run of the closed DB's leader = %v; want an error saying it was closed", err)
	}
	select {
	case <-closed:
	case <-time.After(slack):
		t.Error("Close did not return")
	}
	r.check(t)

	// A leader of a DB already closed says so at once.
	if err := a.Leader(leaderName, fast("a")).Run(t.Context(), r.lead("a")); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Run on a closed DB = %v", err)
	}
}

// The leader is cut off from the database (its packets dropped, the
// connection not closed): it stops within LostAfter - Check, and the other
// leads within LostAfter + Check, only after it stopped.
func TestLeaderNetworkLoss(t *testing.T) {
	t.Parallel()
	networkLoss(t, fast)
}

// The same in the proportions of the default timing, which bounds
// takeover at 20 s (LostAfter + Check).
func TestLeaderNetworkLossDefaultProportions(t *testing.T) {
	t.Parallel()
	networkLoss(t, fifth)
}

func networkLoss(t *testing.T, opts func(string) pg.LeaderOptions) {
	u := migrated(t)
	p := newProxy(t, u)
	a, b := open(t, p.url), open(t, u)
	r := newTerms(t)
	oa := opts("a")
	ra := run(t, a.Leader(leaderName, oa), r.lead("a"))
	next(t, r.started, "starting", 5*time.Second)
	run(t, b.Leader(leaderName, opts("b")), r.lead("b"))
	check, lost := oa.Check, oa.LostAfter
	campaigning(t, conn(t, u))

	at := time.Now()
	p.freeze()
	ended := next(t, r.ended, "ending", lost-check+slack)
	started := next(t, r.started, "starting after the leader was cut off", lost+check+slack)
	t.Logf("a stopped %v, b led %v after a was cut off (check %v, lost after %v)",
		ended.end.Sub(at), started.start.Sub(at), check, lost)
	if ended.replica != "a" || started.replica != "b" || started.token != 2 {
		t.Errorf("%s stopped and %s leads term %d; want a, b, 2", ended.replica, started.replica, started.token)
	}
	if gap := started.start.Sub(ended.end); gap <= 0 {
		t.Errorf("b led %v before a stopped", -gap)
	}
	if took := started.start.Sub(at); took > lost+check+slack {
		t.Errorf("b led %v after a was cut off, more than lost-after and a check (%v) and slack", took, lost+check)
	}
	// a, cut off, keeps trying, and leads nothing.
	r.noneBeside(t, min(2*check, 3*time.Second))
	if err := ra.stop(t); err != nil {
		t.Errorf("Run of the cut-off leader = %v", err)
	}
	r.check(t)
	p.cut()
}

// A leader killed with SIGKILL: the other leads within a check.
func TestLeaderKilled(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	child := exec.Command(os.Args[0], "-test.run=^TestLeaderChild$", "-test.v")
	child.Env = append(os.Environ(), "BOOKBOT_LEADER_CHILD="+u)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	leading := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "child leading" {
				close(leading)
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case <-leading:
	case <-time.After(10 * time.Second):
		t.Fatal("the child does not lead")
	}

	b := open(t, u)
	r := newTerms(t)
	run(t, b.Leader(leaderName, fast("b")), r.lead("b"))
	none(t, r.started, "started beside the child", time.Second) // b tries at once
	if info := whoLeads(t, b); info.Replica != "child" || !info.Leading {
		t.Fatalf("WhoLeads = %+v; want the child leading", info)
	}
	at := time.Now()
	if err := child.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	check := fast("").Check
	started := next(t, r.started, "starting after the leader was killed", check+slack)
	t.Logf("b led %v after the leader was killed (check %v)", started.start.Sub(at), check)
	if started.token != 2 {
		t.Errorf("b leads term %d, want 2", started.token)
	}
}

// TestLeaderChild is the child of TestLeaderKilled: it leads until killed.
func TestLeaderChild(t *testing.T) {
	u := os.Getenv("BOOKBOT_LEADER_CHILD")
	if u == "" {
		t.Skip("the child of TestLeaderKilled")
	}
	db, err := pg.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Leader(leaderName, fast("child")).Run(t.Context(), func(ctx context.Context, _ pg.Term) {
		os.Stdout.WriteString("child leading\n")
		<-ctx.Done()
	})
	t.Fatalf("the child's Run returned: %v", err)
}

// Run on a database not migrated says so.
func TestLeaderNotMigrated(t *testing.T) {
	t.Parallel()
	db := open(t, pgtest.URL(t))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := db.Leader(leaderName, fast("a")).Run(ctx, func(context.Context, pg.Term) { t.Error("led") })
	if err == nil || !strings.Contains(err.Error(), "migrate") {
		t.Errorf("Run = %v; want an error about migrating", err)
	}
}

// proxy forwards TCP connections to the database, until freeze: then it
// forwards nothing more, and closes nothing, as a network that drops every
// packet.
type proxy struct {
	url string
	ln  net.Listener

	mu     sync.Mutex
	thawed chan struct{} // closed while forwarding
	conns  []net.Conn
}

func newProxy(t *testing.T, dbURL string) *proxy {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = ln.Addr().String()
	p := &proxy{url: u.String(), ln: ln, thawed: make(chan struct{})}
	close(p.thawed)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		p.cut()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, client, server)
			p.mu.Unlock()
			wg.Go(func() { p.pipe(server, client) })
			wg.Go(func() { p.pipe(client, server) })
		}
	})
	return p
}

// cut closes every connection, as a network that comes back finds the
// server ended them: a pool's Close would wait for what is stuck on one.
func (p *proxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	select {
	case <-p.thawed:
	default:
		close(p.thawed)
	}
}

func (p *proxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawed = make(chan struct{})
}

func (p *proxy) wait() {
	p.mu.Lock()
	c := p.thawed
	p.mu.Unlock()
	<-c
}

func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.wait()
			if _, err := dst.Write(buf[:n]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	p.wait() // a lost network carries no FIN either
	dst.Close()
}
