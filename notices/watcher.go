package notices

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/internal/pause"
)

// Defaults and bounds of the watcher's timing.
const (
	DefaultInterval = time.Minute
	MinInterval     = 15 * time.Second

	// PollTimeout bounds one read and its posts, also when bookbot stops
	// during them.
	PollTimeout = 25 * time.Second

	// BurstSize is the most notices one read posts one by one to a
	// channel; more (a series cancelled at once) go in one message.
	BurstSize = 5

	// keep is how long after a booking ended its claims and thread are
	// kept: long enough for a late cancel of a past booking to find
	// nothing to do.
	keep = 7 * 24 * time.Hour

	// SettleAfter is how long after its claim a notice whose post's answer
	// never came is looked for in Slack: by then the read that claimed it
	// has ended (PollTimeout), in whichever replica made it, with half a
	// minute to spare for replicas' clocks to disagree.
	SettleAfter = time.Minute
	// lookBack is how much earlier than its claim a notice is looked for:
	// Slack's clock and the claimer's may disagree.
	lookBack = time.Minute

	// ConfirmAfter is how long after a read that cancels many bookings the
	// list is read again before anything is announced: the service can
	// answer an empty or short list for a moment (a deploy, a failover).
	ConfirmAfter = 5 * time.Second
	// manyCancelled is how many cancellations, if they are also half the
	// bookings listed before or more, one read is not believed about.
	manyCancelled = 3

	// HoldFor is how long after bookbot sent a create or a cancel whose
	// answer has not come a change it may have made waits for it, so that
	// the notice says who made it; after that it is announced as made
	// elsewhere.
	HoldFor = 3 * time.Minute
)

// Config configures a Watcher.
type Config struct {
	List      Lister
	Store     Store
	Publisher Publisher
	Finder    Finder  // nil: a notice whose answer was lost is not posted again
	Alerter   Alerter // nil: alerts go to the log only
	Writes    Writes  // nil: every change is a stranger's
	Metrics   Metrics // nil: none

	Channel  string            // where notices go
	Routes   map[string]string // event slug → channel, instead of Channel
	Interval time.Duration     // between reads; DefaultInterval when 0
	Now      func() time.Time  // nil: time.Now
	// Skew is the booking API's clock minus bookbot's, as its latest
	// answer told; ok is false while it is not known. nil: never known.
	Skew func() (d time.Duration, ok bool)
	// Sleep is every wait of the watcher (between reads, and before a
	// read again): it waits d, or less when ctx ends first, and then
	// returns ctx's error. nil: a timer. Tests replace it, or end its
	// waits by moving their clock.
	Sleep func(ctx context.Context, d time.Duration) error
	Log   *slog.Logger // nil: discarded
}

// Watcher reads the bookings list every Interval and posts what changed.
type Watcher struct {
	cfg Config

	// paused holds, by cause (the read, the post), why notices are paused
	// as people were told: once, and again when they resume.
	paused map[string]string
	// until is when a 429's wait ends.
	until time.Time
	// running is Run's context while Run reads: a wait before reading
	// again ends with it (wait). nil outside Run.
	running context.Context
}

// NewWatcher returns a Watcher.
func NewWatcher(cfg Config) *Watcher {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Sleep == nil {
		cfg.Sleep = pause.For
	}
	return &Watcher{cfg: cfg, paused: map[string]string{}}
}

// Run reads the list at once and then every Interval until ctx ends; a
// read under way when ctx ends is finished first (PollTimeout at most).
func (w *Watcher) Run(ctx context.Context) error {
	var pruned time.Time
	for ctx.Err() == nil {
		began := w.cfg.Now()
		if !began.Before(w.until) {
			// A read under way is finished when ctx ends: a post cut off
			// midway could not be known to be in the channel or not. Its
			// wait before reading again is not (wait).
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), PollTimeout)
			w.running = ctx
			if err := w.Poll(pctx); err != nil {
				w.cfg.Log.Warn("notices: read not announced", "error", err)
			}
			w.running = nil
			cancel()
		}
		if now := w.cfg.Now(); now.Sub(pruned) > 24*time.Hour {
			if err := w.cfg.Store.Prune(ctx, now.Add(-keep)); err != nil && ctx.Err() == nil {
				w.cfg.Log.Warn("notices: pruning failed", "error", err)
			}
			pruned = now
		}
		// The next read is an interval after this one began, at once after
		// one that took longer.
		if w.cfg.Sleep(ctx, w.cfg.Interval-w.cfg.Now().Sub(began)) != nil {
			return nil
		}
	}
	return nil
}

// Poll reads the list once and posts what changed since the last read. The
// first read ever is the baseline and announces nothing. A read that
// cancels many bookings is believed only once a second read, ConfirmAfter
// later, cancels no others.
func (w *Watcher) Poll(ctx context.Context) error {
	next, err := w.read(ctx)
	if err != nil {
		return err
	}
	prev, ok, err := w.cfg.Store.Last(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return w.baseline(ctx, next)
	}
	changes := advance(prev, &next)
	if first := cancelledIDs(changes); cancelsMany(prev, first) {
		if next, changes, err = w.confirm(ctx, prev, first); err != nil {
			return err
		}
	}
	w.cfg.Log.Debug("notices: list read", "bookings", len(next.Bookings), "changes", len(changes))
	if len(changes) == 0 {
		return w.cfg.Store.SaveLast(ctx, next)
	}
	notices, held := w.notices(ctx, prev, changes)

	// Notices go out channel by channel, in the order of the changes.
	byChannel := map[string][]routed{}
	var order []string
	for _, n := range notices {
		r, ch, err := w.route(ctx, n)
		if err != nil {
			return err
		}
		if ch == "" {
			continue // no channel for this event type's notices
		}
		if _, seen := byChannel[ch]; !seen {
			order = append(order, ch)
		}
		byChannel[ch] = append(byChannel[ch], r)
	}
	retry := false
	for _, ch := range order {
		ns := byChannel[ch]
		var again bool
		if len(ns) > BurstSize {
			again, err = w.burst(ctx, ch, ns, prev.At)
		} else {
			again, err = w.each(ctx, ch, ns, prev.At)
		}
		if err != nil {
			return err
		}
		retry = retry || again
	}
	if retry {
		// The snapshot stays, so the next read finds the same changes;
		// the ones already posted are claimed and not posted again.
		return errors.New("some notices are not settled; they are tried again, or looked for in Slack, at the next read")
	}
	if held > 0 {
		// The snapshot stays, so the next read finds the held changes again.
		w.cfg.Log.Info("notices: changes bookbot's own writes may have made wait for their answers", "changes", held)
		return nil
	}
	return w.cfg.Store.SaveLast(ctx, next)
}

// baseline saves the first read ever, against which changes are found
// from then on. An empty one is read again ConfirmAfter later first: taken
// from a moment when the service answered nothing, it would make every
// booking it missed "new" at the next read.
func (w *Watcher) baseline(ctx context.Context, first Snapshot) error {
	if len(first.Bookings) == 0 {
		w.cfg.Log.Info("notices: the first read lists no bookings; reading again before taking it as the baseline", "again_in", ConfirmAfter.String())
		if err := w.wait(ctx, ConfirmAfter); err != nil {
			return err
		}
		var err error
		if first, err = w.read(ctx); err != nil {
			return err
		}
	}
	w.cfg.Log.Info("notices: first read recorded; changes from now on are announced", "bookings", len(first.Bookings))
	return w.cfg.Store.SaveLast(ctx, first)
}

// wait waits d before reading again, through Sleep, and ends sooner when
// ctx ends or Run is stopped: nothing has been announced yet, and the next
// read, or the next start's, reads again.
func (w *Watcher) wait(ctx context.Context, d time.Duration) error {
	if w.running != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(w.running, cancel)()
	}
	return w.cfg.Sleep(ctx, d)
}

// askedLister is a Lister that says when the list it returns was asked
// for (booking.Recent): a list shared with another reader can be older
// than the call.
type askedLister interface {
	BookingsAsked(ctx context.Context) ([]booking.Booking, time.Time, error)
}

// read reads the list.
func (w *Watcher) read(ctx context.Context) (Snapshot, error) {
	var (
		list  []booking.Booking
		asked time.Time
		err   error
	)
	if l, ok := w.cfg.List.(askedLister); ok {
		list, asked, err = l.BookingsAsked(ctx)
	} else {
		list, err = w.cfg.List.Bookings(ctx)
	}
	if err != nil {
		w.metricPoll(false)
		w.readFailed(ctx, err)
		return Snapshot{}, err
	}
	w.metricPoll(true)
	w.resume(ctx, "read", "the bookings list can be read again")
	return w.snapshot(list, asked), nil
}

// confirm reads the list again, ConfirmAfter after a read that cancelled
// the bookings first names, and returns that read and its changes when it
// cancels none but those: each cancellation it shows, the first read
// showed too. When it lists them again, its changes have none of them, and
// the first read is forgotten.
func (w *Watcher) confirm(ctx context.Context, prev Snapshot, first map[string]bool) (Snapshot, []Change, error) {
	w.cfg.Log.Warn("notices: a read cancels many bookings; reading again before announcing anything",
		"cancelled", len(first), "listed_before", len(prev.Bookings), "again_in", ConfirmAfter.String())
	if err := w.wait(ctx, ConfirmAfter); err != nil {
		return Snapshot{}, nil, err
	}
	next, err := w.read(ctx)
	if err != nil {
		return Snapshot{}, nil, err
	}
	changes := advance(prev, &next)
	second := cancelledIDs(changes)
	for id := range second {
		if !first[id] {
			return Snapshot{}, nil, fmt.Errorf("two reads %s apart cancel different bookings (%d, then %d); nothing is announced until reads agree", ConfirmAfter, len(first), len(second))
		}
	}
	if cancelsMany(prev, second) {
		w.cfg.Log.Info("notices: a second read confirms the cancellations", "cancelled", len(second))
	} else {
		w.cfg.Log.Info("notices: a second read lists the bookings again; the read that dropped them is not announced", "cancelled", len(second))
	}
	return next, changes, nil
}

// cancelledIDs are the bookings changes cancel.
func cancelledIDs(changes []Change) map[string]bool {
	ids := map[string]bool{}
	for _, c := range changes {
		if c.Kind == Cancelled {
			ids[c.Booking.ID] = true
		}
	}
	return ids
}

// cancelsMany reports whether cancelling ids is too much for one read to
// be believed: manyCancelled or more, and half or more of what prev listed.
func cancelsMany(prev Snapshot, ids map[string]bool) bool {
	return len(ids) >= manyCancelled && 2*len(ids) >= len(prev.Bookings)
}

// snapshot is a read of list asked for at asked (zero: now), on both
// clocks. A booking gone from a list asked for earlier was gone by then:
// dated later, one cancelled just before its start would pass for started.
func (w *Watcher) snapshot(list []booking.Booking, asked time.Time) Snapshot {
	if asked.IsZero() {
		asked = w.cfg.Now()
	}
	s := Snapshot{At: asked, Bookings: list}
	if w.cfg.Skew != nil {
		if d, ok := w.cfg.Skew(); ok {
			s.ServiceAt = s.At.Add(d)
		}
	}
	return s
}

// routed is a notice and its booking's thread, read once per poll.
type routed struct {
	Notice
	thread *Message // nil for a New notice, and for a booking with no thread
	// first is the booking's first notice when it lies where notices no
	// longer go (the person chose another place since): it is updated in
	// place, and this notice is posted where they go now.
	first *Message
}

// route is where a notice goes: its booking's thread, its event's route,
// or the notice channel. A thread where notices no longer go is left for
// where they go now.
func (w *Watcher) route(ctx context.Context, n Notice) (routed, string, error) {
	r := routed{Notice: n}
	if n.Kind != New {
		m, ok, err := w.cfg.Store.Thread(ctx, n.Booking.ID)
		if err != nil {
			return r, "", err
		}
		if ok && w.postsTo(m.Channel) {
			r.thread = &m
			return r, m.Channel, nil
		}
		if ok {
			r.first = &m
		}
	}
	if ch, ok := w.cfg.Routes[n.Booking.EventType.String]; ok && n.Booking.EventType.Valid {
		return r, ch, nil
	}
	return r, w.cfg.Channel, nil
}

// postsTo reports whether notices go to the conversation channel now: the
// notice channel, a route's, or the direct message of a person whose ID
// is the notice channel (a message posted to a user ID lands in a DM,
// whose ID begins with D).
func (w *Watcher) postsTo(channel string) bool {
	person := strings.HasPrefix(w.cfg.Channel, "U") || strings.HasPrefix(w.cfg.Channel, "W")
	if channel == w.cfg.Channel || (person && strings.HasPrefix(channel, "D")) {
		return true
	}
	for _, ch := range w.cfg.Routes {
		if channel == ch {
			return true
		}
	}
	return false
}

// each posts notices one by one. It reports whether any must be tried
// again. After a notice Slack did not post it posts no more: the ones
// after it wait for the next read, so as not to overtake it.
func (w *Watcher) each(ctx context.Context, channel string, rs []routed, since time.Time) (bool, error) {
	retry := false
	for _, r := range rs {
		k := key(r.Notice, since)
		post, again, err := w.claim(ctx, channel, []routed{r}, []Key{k})
		retry = retry || again
		if err != nil {
			return retry, err
		}
		if !post[0] {
			continue
		}
		n := r.Notice
		n.Claim = k.ID()
		var m Message
		var postErr error
		root := r.thread == nil // a post starts the booking's thread; a reply does not
		switch {
		case r.thread != nil:
			w.update(ctx, *r.thread, n)
			m, postErr = w.cfg.Publisher.Reply(ctx, *r.thread, n)
		case r.first != nil:
			w.update(ctx, *r.first, n)
			m, postErr = w.cfg.Publisher.Post(ctx, channel, n)
		default:
			m, postErr = w.cfg.Publisher.Post(ctx, channel, n)
		}
		again, err = w.settle(ctx, []Key{k}, n.Kind, m, root, postErr)
		retry = retry || again
		if err != nil || errors.Is(postErr, ErrNotPosted) {
			return retry, err
		}
	}
	return retry, nil
}

// burst posts many notices in one message, or as few as fit, and updates
// each one's first notice in place. Each notice is settled as its own
// message went: one not sent, after a message that was not posted or
// whose answer was lost, is released and tried again at the next read.
func (w *Watcher) burst(ctx context.Context, channel string, rs []routed, since time.Time) (bool, error) {
	all := make([]Key, len(rs))
	for i, r := range rs {
		all[i] = key(r.Notice, since)
	}
	post, retry, err := w.claim(ctx, channel, rs, all)
	if err != nil {
		return retry, err
	}
	var keys []Key
	var fresh []Notice
	var threads []*Message
	for i, r := range rs {
		if post[i] {
			n := r.Notice
			n.Claim = all[i].ID()
			n.Since = since
			keys = append(keys, all[i])
			fresh = append(fresh, n)
			threads = append(threads, cmp.Or(r.thread, r.first))
		}
	}
	if len(fresh) == 0 {
		return retry, nil
	}
	sent := w.cfg.Publisher.Burst(ctx, channel, fresh)
	if len(sent) < len(fresh) {
		w.cfg.Log.Info("notices: the rest of a burst was not sent after a message that did not surely go out; it is posted at the next read",
			"channel", channel, "notices", len(fresh)-len(sent))
	}
	for i, n := range fresh {
		if i >= len(sent) {
			if err := w.cfg.Store.Release(ctx, keys[i]); err != nil {
				return true, err
			}
			retry = true
			continue
		}
		again, err := w.settle(ctx, keys[i:i+1], n.Kind, sent[i].Message, false, sent[i].Err)
		retry = retry || again
		if err != nil {
			return retry, err
		}
		if sent[i].Err == nil && threads[i] != nil {
			w.update(ctx, *threads[i], n)
		}
	}
	return retry, nil
}

// claim claims the notices of rs, under keys. It reports which to post
// now, and whether any change must be tried again at the next read.
//
// A claim with no message recorded is a post whose answer never came:
// lost on the way, or the process posting it died. SettleAfter its claim,
// that post has ended, and the Finder tells whether it is in Slack: if so
// it is recorded, if not the notice is posted now. Without a Finder it is
// never posted again, so that it cannot appear twice. All such notices
// are looked for at once, so that a lost burst costs one look.
func (w *Watcher) claim(ctx context.Context, channel string, rs []routed, keys []Key) (post []bool, retry bool, err error) {
	post = make([]bool, len(rs))
	var lost []int // indexes of the claims to look for
	var from time.Time
	for i, k := range keys {
		if post[i], err = w.cfg.Store.Claim(ctx, k, w.cfg.Now()); err != nil {
			return post, retry, err
		}
		if post[i] {
			continue
		}
		var at time.Time
		var open bool
		if at, open, err = w.cfg.Store.Unsettled(ctx, k); err != nil {
			return post, retry, err
		}
		switch {
		case !open || w.cfg.Finder == nil:
			// announced before, or at most once
		case w.cfg.Now().Sub(at) < SettleAfter:
			retry = true // its post may still be on the way
		default:
			if len(lost) == 0 || at.Before(from) {
				from = at
			}
			lost = append(lost, i)
		}
	}
	if len(lost) == 0 {
		return post, retry, nil
	}

	var threads []Message
	claims := make([]string, len(lost))
	for j, i := range lost {
		claims[j] = keys[i].ID()
		if th := rs[i].thread; th != nil && !slices.Contains(threads, *th) {
			threads = append(threads, *th)
		}
	}
	found, err := w.cfg.Finder.Find(ctx, channel, threads, claims, from.Add(-lookBack))
	if err != nil {
		cannot := errors.Is(err, ErrCannotLook)
		for _, i := range lost {
			k := keys[i]
			if cannot {
				w.metricNotice(k.Kind, "maybe_posted")
				w.cfg.Log.Warn("notices: a notice whose post was cut short cannot be looked for in Slack; it is not posted again, so it cannot appear twice",
					"booking_id", k.BookingID, "kind", string(k.Kind), "error", err)
			} else {
				w.cfg.Log.Warn("notices: a notice whose post was cut short could not be looked for in Slack; looking again at the next read",
					"booking_id", k.BookingID, "kind", string(k.Kind), "error", err)
			}
		}
		return post, retry || !cannot, nil
	}
	for _, i := range lost {
		k, r := keys[i], rs[i]
		if m, ok := found[k.ID()]; ok {
			if err := w.cfg.Store.Posted(ctx, k, m.Message, r.thread == nil && !m.Burst); err != nil {
				return post, retry, err
			}
			w.metricNotice(k.Kind, "posted")
			w.cfg.Log.Info("notices: a notice whose post was cut short is in Slack; it is not posted again",
				"booking_id", k.BookingID, "kind", string(k.Kind), "channel", m.Channel, "ts", m.TS)
			if first := cmp.Or(r.thread, r.first); first != nil {
				w.update(ctx, *first, r.Notice)
			}
			continue
		}
		// Not in Slack: the post never got there.
		if err := w.cfg.Store.Release(ctx, k); err != nil {
			return post, retry, err
		}
		if post[i], err = w.cfg.Store.Claim(ctx, k, w.cfg.Now()); err != nil {
			return post, retry, err
		}
	}
	return post, retry, nil
}

// update rewrites a booking's first notice; when it fails, the notice's
// reply still tells of the change.
func (w *Watcher) update(ctx context.Context, thread Message, n Notice) {
	if err := w.cfg.Publisher.Update(ctx, thread, n); err != nil {
		w.cfg.Log.Warn("notices: first notice not updated", "booking_id", n.Booking.ID, "error", err)
	}
}

// settle records a post's outcome for its claims. A post Slack refused is
// released, to be tried again; one that may have gone out stays claimed.
func (w *Watcher) settle(ctx context.Context, keys []Key, kind Kind, m Message, root bool, postErr error) (retry bool, err error) {
	switch {
	case postErr == nil:
		for _, k := range keys {
			if err := w.cfg.Store.Posted(ctx, k, m, root); err != nil {
				return false, err
			}
			w.metricNotice(k.Kind, "posted")
		}
		w.resume(ctx, "post", "Slack takes notices again")
		return false, nil
	case errors.Is(postErr, ErrNotPosted):
		for _, k := range keys {
			if err := w.cfg.Store.Release(ctx, k); err != nil {
				return true, err
			}
			w.metricNotice(k.Kind, "failed")
		}
		w.pause(ctx, "post", "notices: Slack refused a notice", fmt.Sprintf(
			"Booking notices cannot be posted: Slack answered %s. bookbot tries again at every read of the bookings list (every %s), and once Slack takes them, every change since is announced.",
			slackReason(postErr), w.cfg.Interval), postErr)
		return true, nil
	case w.cfg.Finder != nil:
		// Kept for the next reads, which look for it in Slack once its post
		// has surely ended.
		for _, k := range keys {
			w.cfg.Log.Warn("notices: the answer to a notice's post was lost; it is looked for in Slack before it is posted again",
				"booking_id", k.BookingID, "kind", string(kind), "error", postErr)
		}
		return true, nil
	default:
		for _, k := range keys {
			w.metricNotice(k.Kind, "maybe_posted")
			w.cfg.Log.Warn("notices: notice may not have been posted; it is not posted again, so it cannot appear twice",
				"booking_id", k.BookingID, "kind", string(kind), "error", postErr)
		}
		return false, nil
	}
}

// readFailed pauses on a 429 as long as it asks, and tells people once when
// the key is refused.
func (w *Watcher) readFailed(ctx context.Context, err error) {
	var apiErr *booking.APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusTooManyRequests && apiErr.RetryAfter > w.cfg.Interval {
		w.until = w.cfg.Now().Add(apiErr.RetryAfter)
	}
	if errors.Is(err, booking.ErrUnauthorized) {
		w.pause(ctx, "read", "notices: the booking API refused the key", fmt.Sprintf(
			"Booking notices are paused: the booking API refused bookbot's API key (it may have been revoked). bookbot keeps reading the bookings list every %s; once the key works again, notices resume by themselves and every change since is announced.",
			w.cfg.Interval), err)
	}
}

// pause tells people, once, why notices stopped.
func (w *Watcher) pause(ctx context.Context, cause, logMsg, text string, err error) {
	w.cfg.Log.Warn(logMsg, "error", err)
	if w.paused[cause] == text {
		return
	}
	w.paused[cause] = text
	w.alert(ctx, text)
}

// resume tells people notices go out again, when they were told of a pause
// for this cause.
func (w *Watcher) resume(ctx context.Context, cause, why string) {
	if w.paused[cause] == "" {
		return
	}
	delete(w.paused, cause)
	w.cfg.Log.Info("notices: resumed", "why", why)
	w.alert(ctx, "Booking notices resumed: "+why+". Changes made while they were paused are announced now.")
}

func (w *Watcher) alert(ctx context.Context, text string) {
	if w.cfg.Alerter == nil {
		return
	}
	if err := w.cfg.Alerter.Alert(ctx, text); err != nil {
		w.cfg.Log.Warn("notices: alert not sent", "error", err)
	}
}

// notices turns changes into notices: titles, and who made them through
// bookbot. It holds back, and counts, the changes a write of bookbot's
// still in flight may have made, for at most HoldFor.
func (w *Watcher) notices(ctx context.Context, prev Snapshot, changes []Change) (out []Notice, held int) {
	titles := map[string]string{}
	if types, err := w.cfg.List.EventTypes(ctx); err == nil {
		for _, t := range types {
			titles[t.Slug] = t.Title
		}
	}
	var writes []journal.Entry
	if w.cfg.Writes != nil {
		var err error
		if writes, err = w.cfg.Writes.Since(w.cfg.Now().Add(-7 * 24 * time.Hour)); err != nil {
			w.cfg.Log.Warn("notices: the journal could not be read; changes are not attributed", "error", err)
		}
	}
	for _, c := range changes {
		n := Notice{Change: c, Title: titles[c.Booking.EventType.String]}
		if n.Title == "" {
			n.Title = c.Booking.EventType.Or("")
		}
		made, inFlight := madeBy(c, writes)
		if made != nil {
			n.By = &By{Actor: made.Actor, At: made.At}
		}
		if n.By == nil && inFlight == nil {
			n.EmailCheck = emailChecked(c, writes)
			if n.EmailCheck == nil {
				n.Unclear = unclearWrite(c, writes)
			}
		}
		if c.Kind == New && prev.Full() && made != nil && made.DoneAt.Before(prev.At) {
			// Booked through bookbot, and answered, before the last read,
			// which did not list it where it is now: it was beyond the end,
			// and moved in. A create answered after that read may have
			// been made after it too.
			n.Unsure = true
		}
		if inFlight != nil {
			if w.cfg.Now().Sub(inFlight.At) < HoldFor {
				held++
				continue
			}
			w.cfg.Log.Warn("notices: bookbot's own write that may have made a change has had no answer; the change is announced as made elsewhere",
				"booking_id", c.Booking.ID, "kind", string(c.Kind), "journal_seq", inFlight.Seq)
		}
		out = append(out, n)
	}
	return out, held
}

// madeBy finds the write through bookbot that made a change, if bookbot
// knows it did (made): its create of that booking ID, or its cancel of it,
// with the outcome confirmed. A create refused, blocked, failed, unclear or
// dry-run made nothing bookbot can vouch for, even when the list shows a
// booking like it, made elsewhere. When the newest write that may have
// made the change is still in flight (a create of the same event, start
// and attendee, or a cancel of that ID), it is returned as inFlight: once
// its answer comes, it tells.
func madeBy(c Change, writes []journal.Entry) (made, inFlight *journal.Entry) {
	b := c.Booking
	for i := len(writes) - 1; i >= 0; i-- {
		e := writes[i]
		if e.DryRun {
			continue
		}
		switch {
		case c.Kind == New && e.Op == booking.OpCreate:
			if e.Outcome == booking.Confirmed && e.Created == b.ID {
				return &writes[i], nil
			}
			start, err := time.Parse(time.RFC3339Nano, e.Start)
			if found, _ := booking.Find([]booking.Booking{b}, e.EventType, start, e.Email); e.Open() && err == nil && found != nil {
				return nil, &writes[i]
			}
		case c.Kind == Cancelled && e.Op == booking.OpCancel && e.BookingID == b.ID:
			if id, ok := e.CancelledBooking(); ok && id == b.ID {
				return &writes[i], nil
			}
			if e.Open() {
				return nil, &writes[i]
			}
		}
	}
	return nil, nil
}

// emailChecked finds bookbot's latest create of a new booking's event,
// start and attendee that the service answered 409 with body status 200:
// the booking, made elsewhere, came of the email confirmation that create
// needed (a repeat of an earlier booking is refused on the booking page
// too, so it cannot be that).
func emailChecked(c Change, writes []journal.Entry) *By {
	if c.Kind != New {
		return nil
	}
	for i := len(writes) - 1; i >= 0; i-- {
		e := writes[i]
		if e.DryRun || e.Op != booking.OpCreate || e.Outcome != booking.NotBooked || e.Conflict != booking.ConflictRefused {
			continue
		}
		start, err := time.Parse(time.RFC3339Nano, e.Start)
		if found, _ := booking.Find([]booking.Booking{c.Booking}, e.EventType, start, e.Email); err == nil && found != nil {
			return &By{Actor: e.Actor, At: e.At}
		}
	}
	return nil
}

// unclearWrite finds bookbot's latest write that may have made a change
// and whose answer was unclear, with the list unable to settle it then: a
// create of a New booking's event, start and attendee, or whose receipt
// named it, that is unknown or probably not booked, or an unknown cancel
// of a Cancelled booking. The
// change may be that write's; bookbot cannot vouch for it, nor call it a
// stranger's.
func unclearWrite(c Change, writes []journal.Entry) *By {
	for i := len(writes) - 1; i >= 0; i-- {
		e := writes[i]
		if e.DryRun {
			continue
		}
		switch {
		case c.Kind == New && e.Op == booking.OpCreate && (e.Outcome == booking.Unknown || e.Outcome == booking.ProbablyNotBooked):
			start, err := time.Parse(time.RFC3339Nano, e.Start)
			found, _ := booking.Find([]booking.Booking{c.Booking}, e.EventType, start, e.Email)
			if (err == nil && found != nil) || (e.Created != "" && e.Created == c.Booking.ID) {
				return &By{Actor: e.Actor, At: e.At}
			}
		case c.Kind == Cancelled && e.Op == booking.OpCancel && e.BookingID == c.Booking.ID && e.Outcome == booking.Unknown:
			return &By{Actor: e.Actor, At: e.At}
		}
	}
	return nil
}

func key(n Notice, since time.Time) Key {
	return Key{BookingID: n.Booking.ID, Kind: n.Kind, Start: n.Booking.Start, End: n.Booking.End, Since: since}
}

func (w *Watcher) metricPoll(ok bool) {
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.NoticePoll(ok, w.cfg.Now())
	}
}

func (w *Watcher) metricNotice(k Kind, result string) {
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.Notice(k, result)
	}
}

// slackReason is Slack's answer in a Publisher's error, for people.
func slackReason(err error) string {
	s := err.Error()
	if _, after, ok := strings.Cut(s, ErrNotPosted.Error()+": "); ok {
		s = after
	}
	return s
}
