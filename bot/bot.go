package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/internal/pause"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/outbox"
	"github.com/bookbot/bookbot/personal"
)

// Booker is what the bot needs of the booking API (*booking.Client).
type Booker interface {
	EventTypes(ctx context.Context) ([]booking.EventType, error)
	Slots(ctx context.Context, eventType string) ([]booking.Slot, error)
	Bookings(ctx context.Context) ([]booking.Booking, error)
	Create(ctx context.Context, req booking.CreateRequest) (*booking.Result, error)
	Cancel(ctx context.Context, id string) (*booking.Result, error)
	Recheck(ctx context.Context, eventType string, start time.Time, email string) *booking.Result
	// Recent is a reader of the bookings list for one kind of periodic
	// work, taking a list up to maxAge old (see Config.RecentList).
	Recent(maxAge time.Duration) *booking.Recent
}

// SlackAPI is what the bot needs of Slack's Web API (*slack.Client).
type SlackAPI interface {
	OpenViewContext(ctx context.Context, triggerID string, view slack.ModalViewRequest) (*slack.ViewResponse, error)
	UpdateViewContext(ctx context.Context, view slack.ModalViewRequest, externalID, hash, viewID string) (*slack.ViewResponse, error)
	PublishViewContext(ctx context.Context, req slack.PublishViewContextRequest) (*slack.ViewResponse, error)
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slack.MsgOption) (string, string, string, error)
	UnfurlMessageContext(ctx context.Context, channelID, timestamp string, unfurls map[string]slack.Attachment, options ...slack.MsgOption) (string, string, string, error)
	GetUserInfoContext(ctx context.Context, user string, options ...slack.GetUserInfoOption) (*slack.User, error)
}

// DigestPreviewer builds a digest without posting it (*digest.Runner).
type DigestPreviewer interface {
	Preview(ctx context.Context, day time.Time) (digest.Digest, error)
}

// Journal is what the bot needs of the write journal (*journal.Journal):
// the recent entries for `/booking audit`, and the review queue.
type Journal interface {
	Since(t time.Time) ([]journal.Entry, error)
	Unreported() ([]journal.Entry, error)
	MarkReported(seq uint64, to string) error
	MarkReviewed(seq uint64, by string) (journal.Entry, error)
	Entry(seq uint64) (journal.Entry, error)
}

// StepEnder ends Workflow Builder steps: functions.completeSuccess with
// the step's outputs, functions.completeError with a reason. FunctionSteps
// is bookbot's.
type StepEnder interface {
	CompleteStep(ctx context.Context, executionID string, outputs map[string]any) error
	FailStep(ctx context.Context, executionID, reason string) error
}

// Config is how the bot behaves.
type Config struct {
	Command string                   // the slash command, e.g. "/booking"
	Allowed func(userID string) bool // who may use the bot
	Contact string                   // whom people not allowed are told to ask (a Slack user ID); "" names no one
	TeamID  string                   // the workspace; payloads from other teams are ignored

	// BookingPage is the owner's public booking page, linked where people
	// are sent there; "" names it without a link.
	BookingPage string

	// DryRun marks every message and view: bookbot sends no bookings or
	// cancellations, and shows what it would have sent.
	DryRun bool
	// Journal is the write journal: `/booking audit` reads it, and the
	// entries that need a person are reported to ReviewChannel, or when that
	// is empty by direct message to Reviewers[0]. nil: neither.
	Journal       Journal
	ReviewChannel string
	Reviewers     []string
	// JournalKeep is how long the journal keeps settled entries
	// (BOOKBOT_JOURNAL_KEEP_DAYS), for the words of a review whose entry
	// is gone; 0 when it is not known.
	JournalKeep time.Duration

	Digest        DigestPreviewer // nil: `/booking digest` says the digest is off
	DigestZone    *time.Location
	IncludeEmails bool // show attendee emails in the digest preview

	// Personal keeps each person's reminder and agenda settings: `remind`,
	// `agenda`, their modal and App Home read and change them there. nil:
	// they say reminders are not set up on this bookbot.
	Personal personal.Store
	// Outbox, when set, is where each review report is claimed before it
	// is posted, so an entry is reported once however many replicas look.
	// nil: this process reports alone, one report at a time.
	Outbox outbox.Store

	// ViewKey signs the booking forms bookbot makes, and a submission is
	// booked only from a form it signed. Replicas must share it: ViewKey
	// derives one from the Slack app token. nil: a key of this process's
	// own.
	ViewKey []byte

	// Seen, when set, is the memory of envelopes seen that replicas share
	// (pg.Dedupe made with SeenTTL), so a redelivery that lands on
	// another replica is not acted on twice, or the embedded state's, in
	// this process's memory (bolt.Dedupe, Local). nil: this replica's
	// only.
	Seen Seen

	// Accounts keeps people's own calendars, Sealer seals and opens their
	// keys (nil: BOOKBOT_SECRET_KEY is not set, and `connect` says the
	// operator must set it), and Calendars makes the client of each. With
	// Accounts nil nobody has a calendar of their own.
	Accounts  account.Store
	Sealer    *account.Sealer
	Calendars Calendars
	// IsOwnerKey reports whether a key someone connected is the owner's
	// (booking.Client.Holds): they then act on the owner's calendar, as
	// one calendar with everyone on it. nil: there is no owner's key.
	IsOwnerKey func(booking.Key) bool
	// AccountsChanged runs after someone connected, disconnected or moved
	// their notices, so their notices follow at once; nil: nothing.
	AccountsChanged func()

	// Noticed reports whether a new booking of the event type slug on the
	// owner's calendar is announced by a live notice (NOTIFY_CHANNEL, or
	// a route of NOTIFY_ROUTES); nil: none is, and no message promises
	// one. A person's own calendar's are announced unless they turned
	// them off.
	Noticed func(slug string) bool

	// RecentList is how old a bookings list, read for anyone, the
	// reminders and the live notices of a calendar take rather than
	// reading their own (booking.Recent), so the two cost one read between
	// them on each calendar, as on the owner's; 0: each reads its own.
	RecentList time.Duration

	// PersonalChanged runs after someone's settings were saved, so what
	// they made due (a reminder for a meeting in ten minutes) goes out at
	// once; nil: nothing.
	PersonalChanged func()

	// Offers keeps the offer cards posted with `offer`, shared by replicas
	// like the rest of the state; nil: `offer` says offers are not set up.
	Offers offer.Store
	// OfferTTL is how long an offer can be booked from (OFFER_TTL);
	// 0: DefaultOfferTTL.
	OfferTTL time.Duration
	// Steps ends the Workflow Builder steps that post offers
	// (FunctionSteps); nil: the step is not answered, and the log says so.
	Steps StepEnder
	// OffersShared says other processes share Offers (replicas on one
	// database), so a time another one took is taken for left behind only
	// once it is old (SettleOffers). false: this process holds the store
	// alone, and a time another took was left by one that stopped.
	OffersShared bool

	HTTPClient  *http.Client  // for response_url posts
	WorkTimeout time.Duration // bound on the work behind one envelope (default 60 s)
	Now         func() time.Time
	Log         *slog.Logger
	Metrics     Metrics // nil: none
}

// Bot serves Slack. Create it with New; it is safe for concurrent use.
type Bot struct {
	cfg     Config
	booking Booker
	slack   SlackAPI
	log     *slog.Logger

	seen     *seenSet     // envelopes already handled
	users    *userZones   // requester time zones
	cals     *calendarSet // calendars in use, their event types briefly cached so modals open at once
	modals   *modalSlots  // slots shown in each open modal
	creating *keyLock     // creates in flight, by event, start and email
	replica  string       // names this process in the offers' times it takes
	signer   signer       // of booking forms' metadata
	routes   routes       // what each flow answers

	work       inflight        // envelope work in flight
	handling   inflight        // envelopes taken whose Handle has not returned
	heldOut    atomic.Int64    // work that waited all of ackFirstFor for them
	reviewMu   sync.Mutex      // one review report at a time, so none is posted twice
	unreviewed map[uint64]bool // entries said to have nobody to review them, under reviewMu
}

// New returns a bot answering through slackAPI with data from booker,
// the owner's calendar; nil: there is none, and people act only on the
// calendars they connect.
func New(cfg Config, booker Booker, slackAPI SlackAPI) *Bot {
	if cfg.Command == "" {
		cfg.Command = "/booking"
	}
	if cfg.Allowed == nil {
		cfg.Allowed = func(string) bool { return false }
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.WorkTimeout <= 0 {
		cfg.WorkTimeout = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.DigestZone == nil {
		cfg.DigestZone = time.UTC
	}
	if cfg.DryRun {
		slackAPI = dryRunViews{slackAPI}
	}
	signs := newSigner(cfg.ViewKey)
	slackAPI = signedViews{slackAPI, signs}
	b := &Bot{
		cfg:      cfg,
		booking:  booker,
		slack:    slackAPI,
		log:      cfg.Log,
		seen:     newSeenSet(SeenTTL, cfg.Now).sharing(cfg.Seen, cfg.Log),
		users:    newUserZones(profileZone(slackAPI), time.Hour, cfg.Now),
		cals:     newCalendarSet(2*time.Minute, cfg.RecentList, cfg.Now),
		modals:   newModalSlots(cfg.Now),
		creating: newKeyLock(),
		replica:  offer.NewID(),
		signer:   signs,
		routes:   newRoutes(flows()),
	}
	if booker != nil {
		b.cals.owner(booker)
	}
	return b
}

// Acker acknowledges an envelope, with an optional response payload.
type Acker func(payload any)

// Run serves the Socket Mode client's events until ctx is done, then stops
// taking new work and waits up to drain for work in flight (bookings and
// cancels included) to finish and tell their requesters the outcome.
//
// Shutdown goes in this order: envelopes are no longer taken (one that
// arrives is left unacked, so Slack sends it to another connection; it is
// not recorded as seen, so a replica sharing the memory acts on it); those
// taken are acked, for up to ackWindow, and slack-go is given ackWrite to
// write the last of them; the connection is closed, so Slack sends nothing
// more here; then the work drains.
func (b *Bot) Run(ctx context.Context, client *socketmode.Client, drain time.Duration) error {
	// The connection outlives ctx until the envelopes taken are acked.
	connCtx, closeConn := context.WithCancel(context.WithoutCancel(ctx))
	defer closeConn()
	var lastAck atomic.Int64 // when the last ack was queued, Unix ns
	errc := make(chan error, 1)
	go func() { errc <- b.connect(connCtx, client) }()
	// The flows' own work (the review reports, the offers' sweep) stops
	// with ctx, before the drain.
	ownCtx, stopOwn := context.WithCancel(ctx)
	var own sync.WaitGroup
	for _, work := range b.routes.background {
		own.Go(func() { work(b, ownCtx) })
	}
	defer func() { stopOwn(); own.Wait() }()
	var runErr error
	connected := true
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-errc:
			runErr, connected = err, false
			break loop
		case evt, ok := <-client.Events:
			if !ok {
				break loop
			}
			if ctx.Err() != nil {
				break loop // left unacked and unseen, for another connection
			}
			received := time.Now()
			b.connection(evt.Type)
			// Envelopes are handled side by side so that a burst is not
			// acked one after another; the handling counts as work, so a
			// shutdown waits for it.
			b.work.add(1)
			b.handling.add(1)
			go func() {
				defer b.work.add(-1)
				defer b.handling.add(-1)
				b.Handle(evt, func(payload any) {
					if evt.Request == nil {
						return
					}
					if connCtx.Err() != nil {
						b.log.Warn("ack not sent: the Socket Mode connection was closed", "envelope_id", evt.Request.EnvelopeID)
						return
					}
					// Bounded by the connection: slack-go's queue of acks
					// is not read once it is closed.
					if err := client.AckCtx(connCtx, evt.Request.EnvelopeID, payload); err != nil {
						b.log.Error("ack failed", "envelope_id", evt.Request.EnvelopeID, "err", err)
						return
					}
					lastAck.Store(time.Now().UnixNano())
					b.acked(evt.Type, time.Since(received))
				})
			}()
		}
	}
	if connected {
		b.log.Info("shutdown: taking no more envelopes; closing the Socket Mode connection once those taken are acked")
		select {
		case <-b.handling.idle(): // Handle acks first
		case <-time.After(ackWindow): // later acks are ignored by Slack anyway
			b.log.Warn("shutdown: envelopes still unacked when the Socket Mode connection closed", "waited", ackWindow)
		}
		// slack-go writes queued acks one by one and tells when it has
		// only in its debug log, too costly to keep on: it reformats every
		// envelope.
		if wait := ackWrite - time.Since(time.Unix(0, lastAck.Load())); wait > 0 {
			time.Sleep(wait)
		}
	}
	closeConn()
	if connected {
		<-errc // closed before the drain
	}
	b.connectionEnded()
	if !b.Drain(drain) {
		b.log.Warn("shutdown: work still in flight after the drain period", "drain", drain)
	}
	return runErr
}

// connect keeps the Socket Mode connection up. slack-go reconnects by
// itself when Slack asks or the socket dies, and retries a failed
// apps.connections.open or dial with its own backoff (100 ms, doubling, at
// most 5 min); the Slack client's HTTP timeout is what makes a hung
// apps.connections.open fail and be retried. RunContext returns only on
// what slack-go deems fatal: a refused app token stops the bot, as no retry
// fixes it; anything else (an HTTP 404) is retried here, with backoff.
func (b *Bot) connect(ctx context.Context, client *socketmode.Client) error {
	wait := time.Second
	for {
		err := client.RunContext(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && (se.Err == "invalid_auth" || se.Err == "not_authed" || se.Err == "account_inactive" || se.Err == "token_revoked") {
			return fmt.Errorf("slack refused SLACK_APP_TOKEN (%s); check the app-level token and its connections:write scope", se.Err)
		}
		b.log.Warn("Socket Mode connection failed; retrying", "err", connectReason(err), "wait", wait)
		if pause.For(ctx, wait) != nil {
			return nil
		}
		wait = min(2*wait, time.Minute)
	}
}

// connectReason is why a Socket Mode connection attempt failed, for the
// log: Slack's error code, or the transport's error without the URL (the
// WebSocket's carries a connection ticket).
func connectReason(err error) string {
	if err == nil {
		return ""
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() { // said in one of several ways, depending on where it struck
			return "no answer in time: " + ue.Err.Error()
		}
		return ue.Err.Error()
	}
	return err.Error()
}

// Drain waits up to d for envelope work in flight; it reports whether all
// of it finished.
func (b *Bot) Drain(d time.Duration) bool {
	select {
	case <-b.work.idle():
		return true
	case <-time.After(d):
		return false
	}
}

// Idle waits until no envelope work is in flight. An envelope's handling
// is work from before its ack until the work it starts is counted, so
// after an ack Idle covers all it started.
func (b *Bot) Idle(ctx context.Context) error {
	select {
	case <-b.work.idle():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Handle acks one Socket Mode event at once and starts its work. Acks
// carry only what can be computed in memory. With a shared Seen, an
// envelope new to this replica is asked about there (bounded at 500 ms):
// after its ack, unless the ack carries a view (a submission), whose
// answer belongs to the replica that does the work. That replica keeps
// the view there, and one a redelivery reaches acks with it.
func (b *Bot) Handle(evt socketmode.Event, ack Acker) {
	switch evt.Type {
	case socketmode.EventTypeConnected:
		b.log.Info("connected to Slack over Socket Mode")
		return
	case socketmode.EventTypeConnecting, socketmode.EventTypeHello:
		return
	case socketmode.EventTypeDisconnect:
		b.log.Info("Slack asked to reconnect")
		return
	case socketmode.EventTypeConnectionError:
		if ce, ok := evt.Data.(*slack.ConnectionErrorEvent); ok {
			b.log.Warn("Socket Mode connection attempt failed; slack-go retries it",
				"attempt", ce.Attempt, "retry_in", ce.Backoff.String(), "err", connectReason(ce.ErrorObj))
			return
		}
		b.log.Warn("socket mode problem", "type", string(evt.Type))
		return
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorBadMessage, socketmode.EventTypeErrorWriteFailed, socketmode.EventTypeInvalidAuth:
		b.log.Warn("socket mode problem", "type", string(evt.Type))
		return
	}
	if evt.Request == nil {
		return
	}
	id := evt.Request.EnvelopeID
	if prev, dup := b.seen.check(id); dup {
		// Redelivered: ack again with the same answer, act on nothing.
		b.log.Info("redelivered envelope ignored", "envelope_id", id, "retry_attempt", evt.Request.RetryAttempt)
		ack(prev)
		return
	}
	act, answers, asksFirst := b.route(evt)
	if asksFirst && !b.seen.sharedFirst(id) {
		b.redelivered(evt)
		ack(b.seen.sharedAck(id)) // the first replica's, which the person may not have got
		return
	}
	var payload any
	var later jobs
	if answers {
		payload = act(&later)
	}
	b.seen.store(id, payload)
	if asksFirst && id != "" && b.seen.shared != nil {
		later.add("keep-ack", func(ctx context.Context) { b.seen.keepShared(ctx, id) })
	}
	b.work.add(len(later))
	ack(payload)
	if !asksFirst && !b.seen.sharedFirst(id) {
		// Acked as the first delivery was; the work is the other replica's.
		b.work.add(-len(later))
		b.redelivered(evt)
		return
	}
	if !answers {
		var more jobs
		act(&more)
		b.work.add(len(more))
		later = append(later, more...)
	}
	for _, j := range later {
		b.start(j.name, j.fn)
	}
}

// route returns how to act on an envelope: act queues its work and returns
// its ack's payload. answers says that the ack depends on act, which then
// runs before the ack; otherwise the ack is empty and act runs after it,
// once the envelope is known to be this replica's to act on. asksFirst
// says that a shared Seen must be asked before the ack: a submission's ack
// is the view the person sees next.
func (b *Bot) route(evt socketmode.Event) (act func(*jobs) any, answers, asksFirst bool) {
	switch evt.Type {
	case socketmode.EventTypeSlashCommand:
		if cmd, ok := evt.Data.(slack.SlashCommand); ok {
			return func(later *jobs) any { return b.slashCommand(later, cmd) }, true, false
		}
	case socketmode.EventTypeInteractive:
		if cb, ok := evt.Data.(slack.InteractionCallback); ok {
			act := func(later *jobs) any { return b.interaction(later, cb) }
			switch cb.Type {
			case slack.InteractionTypeViewSubmission:
				return act, true, true
			case slack.InteractionTypeBlockSuggestion:
				return act, true, false
			}
			return act, false, false
		}
	case socketmode.EventTypeEventsAPI:
		if ev, ok := evt.Data.(slackevents.EventsAPIEvent); ok {
			return func(later *jobs) any { b.eventsAPI(later, ev); return nil }, false, false
		}
	}
	return func(*jobs) any { return nil }, false, false
}

func (b *Bot) redelivered(evt socketmode.Event) {
	b.log.Info("redelivered envelope ignored: another replica took it", "envelope_id", evt.Request.EnvelopeID, "retry_attempt", evt.Request.RetryAttempt)
}

// jobs is the work one envelope starts. Handle starts it only after the
// ack, so nothing the work sends to Slack (a views.update after a create)
// can overtake the ack's own response_action.
type jobs []job

type job struct {
	name string
	fn   func(ctx context.Context)
}

func (j *jobs) add(name string, fn func(ctx context.Context)) {
	*j = append(*j, job{name, fn})
}

// start runs fn, already counted in b.work, bounded by the work timeout.
// The work keeps running through shutdown (Run drains it), so a booking in
// flight is finished and reported rather than abandoned.
func (b *Bot) start(name string, fn func(ctx context.Context)) {
	go func() {
		defer b.work.add(-1)
		b.acksFirst(ackFirstFor)
		ctx, cancel := context.WithTimeout(context.Background(), b.cfg.WorkTimeout)
		defer cancel()
		defer func() {
			if r := recover(); r != nil {
				b.log.Error("panic in envelope work", "work", name, "panic", fmt.Sprint(r))
			}
		}()
		fn(ctx)
	}()
}

// ackFirstFor is the most work waits for the envelopes being handled: in
// a burst, most of their acks go out before the work the first ones
// started takes the CPU from them. Slack gives an ack 3 s, and the
// views.open of a trigger_id 3 s: 20 ms is a small part of either.
const ackFirstFor = 20 * time.Millisecond

// acksFirst waits, up to max, until no envelope is being handled.
func (b *Bot) acksFirst(max time.Duration) {
	idle := b.handling.idle()
	select {
	case <-idle:
		return
	default:
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		b.heldOut.Add(1)
	}
}

// permitted checks the team and the allow-list before anything else. A
// refused person is told so, and no booking API call is made for them.
func (b *Bot) permitted(teamID, userID string) (ok bool, refusal *message) {
	if b.cfg.TeamID != "" && teamID != "" && teamID != b.cfg.TeamID {
		b.log.Warn("payload from another workspace ignored", "team_id", teamID)
		return false, nil
	}
	if !b.cfg.Allowed(userID) {
		b.log.Info("refused a person not on the allow-list", "user", userID)
		m := refusalMessage(userID, b.cfg.Contact)
		return false, &m
	}
	return true, nil
}
