package booking

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Outcome classifies what a create or cancel did.
type Outcome string

const (
	// Confirmed: the booking exists, verified in the bookings list.
	Confirmed Outcome = "confirmed"
	// NotConfirmed: the API answered booking null, as it does for flows it
	// does not support; nothing was found in the list.
	NotConfirmed Outcome = "not_confirmed"
	// NotBooked: 409, and the list does not show the booking. Conflict says
	// which kind: the time is not free (body status 409), or the service
	// refuses this attendee at this time (body status 200: a repeat of an
	// earlier create, even a cancelled one, or email verification). It
	// must not be resubmitted.
	NotBooked Outcome = "not_booked"
	// Rejected: the API refused the request (400, 401, 403, 404, 413).
	Rejected Outcome = "rejected"
	// RateLimited: bookbot held the request back to stay within the limits
	// (Held: nothing was sent), or the API answered 429 (it was sent and
	// refused). Nothing was booked; RetryAfter says when to try.
	RateLimited Outcome = "rate_limited"
	// ProbablyNotBooked: the answer was unclear and the complete list does not
	// show the booking. A human should check before anyone tries again.
	ProbablyNotBooked Outcome = "probably_not_booked"
	// Unknown: the answer was unclear and listing could not settle it. A
	// human must check before anyone tries again.
	Unknown Outcome = "unknown"

	// Cancelled: the API confirmed the cancel (verified when Verified is set).
	Cancelled Outcome = "cancelled"
	// NotCancelled: the answer was unclear and the booking is still listed.
	// Cancelling again is safe: a repeat cancel is harmless.
	NotCancelled Outcome = "not_cancelled"
	// NotFound: 404. The booking does not exist, belongs to another account,
	// or is assigned to another host.
	NotFound Outcome = "not_found"

	// DryRun: nothing was sent; WouldSend says what would have been.
	DryRun Outcome = "dry_run"

	// AlreadyBooked: the create was not sent, because the same event, start
	// and attendee email is already booked, being booked, or waiting for a
	// person to check an earlier, unclear attempt; or it was sent, answered
	// 409, and the list shows the booking (Err is set then). Prior is the
	// earlier attempt, when bookbot made it; Booking is the booking as
	// listed, when it is.
	AlreadyBooked Outcome = "already_booked"
)

// Reason says why an outcome is what it is where the outcome alone does
// not: which plain refusal, which limit, what the list could not check.
// The journal keeps it with the outcome; "" says nothing more.
type Reason string

const (
	// ReasonFull: NotBooked, after a 5xx whose body says "not booked", as
	// the service answers once it holds as many confirmed bookings as it
	// takes. A plain refusal, not an outage: waiting does not change it.
	ReasonFull Reason = "full"
	// ReasonBlocked: Rejected, after a 403 whose body says "not booked":
	// the service refused this booking for this attendee (the owner's
	// settings may refuse their address or domain). Not a key problem.
	ReasonBlocked Reason = "blocked"
	// ReasonUnanswered: Rejected, after a 400 to a create sent without a
	// note: the event type may require one, or another answer the API
	// cannot send (§2: which questions are required is not discoverable).
	ReasonUnanswered Reason = "unanswered"
	// ReasonEventLimit: RateLimited, after a 429 while bookbot's own
	// attempts of the last minute before it were under the API's limit per
	// address: it was the event type's hourly limit, which can take up to
	// an hour to clear. Only that event type is held back.
	ReasonEventLimit Reason = "event_limit"
	// ReasonMinuteLimit: RateLimited, after a 429 with bookbot's attempts
	// of the last minute before it at the API's limit per address: every
	// create is held back.
	ReasonMinuteLimit Reason = "minute_limit"
	// ReasonBeyondList: Confirmed or Cancelled as the service answered (a
	// receipt for this slot; cancelled: true), of a booking the full list
	// does not show: it lies beyond the first MaxListed, so the list could
	// not check the answer (§7 rule 3: a person may look).
	ReasonBeyondList Reason = "beyond_list"
	// ReasonListUnread: Confirmed or Cancelled as the service answered,
	// with the bookings list unread where it was to check the answer: no
	// try of GET /bookings answered after a create answered with a receipt
	// for its slot, or none could be read before a cancel, so that which
	// booking it was, and whether it was still upcoming, is not known (§7
	// rule 3: a person may look).
	ReasonListUnread Reason = "list_unread"
)

// Request is a write as it would have gone to the API, for a dry run.
type Request struct {
	Method string
	Path   string     // the URL path, /api/v1/… included
	Form   url.Values // the form body; nil for a cancel
}

// Result is the classified outcome of a create or cancel, with what was seen
// on the way, for the person who asked and for the logs.
type Result struct {
	Outcome    Outcome
	Reason     Reason   // why, where Outcome alone does not say
	Booking    *Booking // create: the listed booking (beyond the list: as the receipt and the request have it); cancel: the booking as last listed, when it was
	Receipt    *Receipt // create: what the API returned, if anything
	Verified   bool     // the list agrees with the outcome
	Reconciled bool     // the outcome was settled by listing after an unclear answer
	RetryAfter time.Duration
	Held       bool     // RateLimited without sending: bookbot's own guard held the create back
	WouldSend  *Request // dry run: what would have been sent
	Prior      *Prior   // AlreadyBooked: the earlier create through bookbot, if any
	Err        error    // the error behind the outcome, if any
	Seen       []string // what happened, in order; never holds an email address
	// Listed is the bookings list read after a cancel to settle it, when
	// one could be read: what the calendar holds now, for showing it.
	Listed []Booking
}

// Conflict kinds of a 409 to a create, from the body's status.
const (
	ConflictTimeNotFree = "time_not_free" // body status 409: taken, past, or not a current slot
	ConflictRefused     = "refused"       // body status 200: a repeat of this attendee at this time, or email verification
	ConflictUnstated    = "unstated"      // no body status
)

// Conflict says what kind of 409 a NotBooked create met; "" for any other
// outcome.
func (r *Result) Conflict() string {
	var apiErr *APIError
	if !errors.As(r.Err, &apiErr) || apiErr.StatusCode != http.StatusConflict {
		return ""
	}
	switch apiErr.BodyStatus {
	case http.StatusConflict:
		return ConflictTimeNotFree
	case http.StatusOK:
		return ConflictRefused
	}
	return ConflictUnstated
}

// NeedsHuman reports whether a person must check the calendar before anyone
// tries again: the answer was unclear and listing did not settle it (§7
// rule 3 of the API).
func (r *Result) NeedsHuman() bool {
	return r.Outcome == Unknown || r.Outcome == ProbablyNotBooked
}

func (r *Result) saw(format string, args ...any) {
	r.Seen = append(r.Seen, fmt.Sprintf(format, args...))
}

// LogValue keeps the result's log line free of attendee details.
func (r *Result) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("outcome", string(r.Outcome))}
	if r.Booking != nil {
		attrs = append(attrs, slog.String("booking_id", r.Booking.ID))
	} else if r.Receipt != nil {
		attrs = append(attrs, slog.String("booking_id", r.Receipt.ID))
	}
	if r.Reconciled {
		attrs = append(attrs, slog.Bool("reconciled", true))
	}
	attrs = append(attrs, slog.String("seen", strings.Join(r.Seen, "; ")))
	return slog.GroupValue(attrs...)
}

// Create books a slot for an attendee (POST /bookings), once. It is never
// retried: the API has no idempotency and sends real invitations.
//
// An error means nothing was sent (invalid input, a finished context, a
// journal that could not record the write); fix it and try again. Otherwise
// the Result says what happened. A receipt alone is not trusted: the booking
// is confirmed only when GET /bookings shows it with the same event, start,
// end and attendee email. An unclear answer (timeout, dropped connection,
// 5xx, malformed body) is settled by listing.
func (c *Client) Create(ctx context.Context, req CreateRequest) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if !req.Slot.Start.After(c.now()) {
		return nil, ValidationError{{"slot", "this slot has already started; pick a later one"}}
	}
	ctx, err := c.ownTime(ctx)
	if err != nil {
		return nil, err
	}
	// The API has no idempotency: a create it has seen before may book the
	// attendee twice. What the list shows now (asked for now, not joined
	// in flight) is checked before sending.
	list, err := c.freshList(ctx)
	if err != nil {
		return nil, fmt.Errorf("nothing was sent, because the bookings list could not be read to make sure this booking does not exist already: %w", err)
	}
	listed, _ := Find(list, req.Slot.eventType, req.Slot.Start, req.Email)
	form := url.Values{
		"event_type": {req.Slot.eventType},
		"start":      {req.Slot.rawStart},
		"end":        {req.Slot.rawEnd},
		"name":       {strings.TrimSpace(req.Name)},
		"email":      {req.Email},
	}
	if req.TimeZone != "" {
		form.Set("booker_tz", req.TimeZone)
	}
	if req.Note != "" {
		form.Set("q:booking-note", req.Note)
	}
	w := Write{
		Op: OpCreate, EventType: req.Slot.eventType, Start: req.Slot.rawStart, End: req.Slot.rawEnd,
		Name: form.Get("name"), Email: req.Email,
	}
	ep := endpoint{"POST", "bookings", "POST /bookings"}
	exists := func(res *Result) bool {
		if listed == nil {
			return false
		}
		res.Outcome, res.Booking = AlreadyBooked, listed
		res.saw("not sent: GET /bookings already lists %s for this attendee", listed.ID)
		return true
	}
	res, err := c.write(ctx, w, ep, form, exists, func(res *Result) { c.create(ctx, req, ep, form, res) })
	if dup, ok := errors.AsType[*DuplicateError](err); ok {
		// The booking bookbot made may be listed at another time: moved.
		return c.refused(ctx, dup, listed, cmp.Or(listed, byID(list, dup.Prior.BookingID))), nil
	}
	c.kept.created(ctx, c.keptAs(), c.log, req.Slot.eventType, res)
	return res, err
}

// refused is the outcome of a create the journal refused: nothing was
// sent, because an earlier one stands in the way. listed is the booking
// the list shows for this event, start and attendee, if any; shown is the
// booking to show (listed, or the earlier create's, listed elsewhere).
//
// An earlier create in flight whose booking the list shows did book it:
// its outcome is on its way, or was lost (the journal could not record it
// then). It is recorded from the list, so that it stands as confirmed, not
// in flight for good.
func (c *Client) refused(ctx context.Context, dup *DuplicateError, listed, shown *Booking) *Result {
	res := &Result{Outcome: AlreadyBooked, Prior: &dup.Prior, Booking: shown}
	res.saw("not sent: %v", dup)
	if dup.Prior.Outcome == "" && listed != nil {
		settled := &Result{Outcome: Confirmed, Booking: listed, Verified: true, Reconciled: true}
		settled.saw("GET /bookings lists %s for this event, start and attendee, read before a later create of the same", listed.ID)
		if err := c.journal.Settle(ctx, dup.Prior.Seq, settled); err != nil {
			res.saw("the journal could not record that the list shows %s: %v", listed.ID, err)
		} else {
			res.Prior.Outcome, res.Prior.BookingID = Confirmed, listed.ID
			res.saw("journal entry %d, in flight, recorded as confirmed: GET /bookings lists %s", dup.Prior.Seq, listed.ID)
		}
	}
	c.observer.Wrote(OpCreate, res)
	c.log.LogAttrs(ctx, slog.LevelInfo, "booking create", slog.Any("result", res))
	return res
}

func byID(list []Booking, id string) *Booking {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}

// write records w in the journal, then sends it (or, in a dry run, only
// says what it would send), and records the outcome. exists, when set, may
// settle the write without sending it: the booking exists already. A
// journal's *DuplicateError is returned as it is.
func (c *Client) write(ctx context.Context, w Write, ep endpoint, form url.Values, exists func(*Result) bool, send func(*Result)) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.Actor, w.DryRun, w.Calendar, w.CalendarID = actorOf(ctx), c.dryRun, c.calendar, c.calendarID
	finish := func(*Result) error { return nil }
	if c.journal != nil {
		f, err := c.journal.Begin(ctx, w)
		if _, dup := errors.AsType[*DuplicateError](err); dup {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("nothing was sent, because the journal could not record the %s first: %w", w.Op, err)
		}
		finish = f
	}
	// Lists asked for before or during the write may not show it.
	c.lists.forget()
	defer c.lists.forget()
	res := &Result{}
	switch {
	case exists != nil && exists(res):
	case c.dryRun:
		c.dryRunWrite(ctx, w, ep, form, res)
	default:
		send(res)
	}
	c.record(ctx, w, finish, res)
	c.observer.Wrote(w.Op, res)
	attrs := []slog.Attr{slog.Any("result", res)}
	if w.BookingID != "" {
		attrs = append(attrs, slog.String("booking_id", w.BookingID))
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "booking "+string(w.Op), attrs...)
	return res, nil
}

// The outcome of a write the journal could not record at once is tried
// again after recordWait, then after twice as long each time, up to
// recordMaxWait (each wait jittered).
const (
	recordWait    = time.Second
	recordMaxWait = time.Minute
)

// record records a write's outcome with finish. When the journal cannot
// (its database is down for a moment) the write happened all the same, and
// until its outcome is recorded its entry stands in flight, refusing a
// repeat of the create as "on its way". So it is tried again in the
// background until it is recorded, for as long as the process lives (after
// that, the next start reconciles the entry by listing). A journal that
// cannot record fails Begin too, so nothing new is sent meanwhile: only the
// writes in flight when it failed wait here.
func (c *Client) record(ctx context.Context, w Write, finish func(*Result) error, res *Result) {
	err := finish(res)
	if err == nil {
		return
	}
	c.log.LogAttrs(ctx, slog.LevelError, "journal: the outcome of a write could not be recorded; trying again in the background",
		slog.String("op", string(w.Op)), slog.String("outcome", string(res.Outcome)), slog.String("err", err.Error()))
	kept := *res // the caller goes on with res
	go c.recordLater(context.WithoutCancel(ctx), w, finish, &kept)
}

func (c *Client) recordLater(ctx context.Context, w Write, finish func(*Result) error, res *Result) {
	wait := recordWait
	for attempt := 2; ; attempt++ {
		if c.sleep(ctx, wait/2+rand.N(wait/2+1)) != nil {
			return
		}
		err := finish(res)
		if err == nil {
			c.log.LogAttrs(ctx, slog.LevelInfo, "journal: the outcome of a write was recorded after all",
				slog.String("op", string(w.Op)), slog.String("outcome", string(res.Outcome)), slog.Int("attempt", attempt))
			return
		}
		wait = min(2*wait, recordMaxWait)
		c.log.LogAttrs(ctx, slog.LevelWarn, "journal: the outcome of a write still could not be recorded",
			slog.String("op", string(w.Op)), slog.Int("attempt", attempt), slog.Duration("next", wait), slog.String("err", err.Error()))
	}
}

// dryRunWrite fills res with what would have been sent. A cancel also looks
// the booking up (a read), so the person sees what it would have cancelled.
func (c *Client) dryRunWrite(ctx context.Context, w Write, ep endpoint, form url.Values, res *Result) {
	res.Outcome = DryRun
	res.WouldSend = &Request{Method: ep.method, Path: c.base.Path + ep.path, Form: form}
	res.saw("dry run: %s was not sent", ep.name)
	if w.Op != OpCancel {
		return
	}
	list, err := c.Bookings(ctx)
	if err != nil {
		res.saw("GET /bookings failed, so the booking could not be looked up: %v", err)
		return
	}
	for i, b := range list {
		if b.ID == w.BookingID {
			res.Booking = &list[i]
			res.saw("GET /bookings lists %s", w.BookingID)
			return
		}
	}
	res.saw("GET /bookings (%d listed) does not list %s", len(list), w.BookingID)
}

// create sends one POST /bookings and classifies the answer.
func (c *Client) create(ctx context.Context, req CreateRequest, ep endpoint, form url.Values, res *Result) {
	wait, ok, err := c.reserve(ctx, req.Slot.eventType)
	if err != nil {
		res.Outcome, res.RetryAfter, res.Held, res.Err = RateLimited, wait, true, err
		res.saw("not sent: %v", err)
		return
	}
	if !ok {
		res.Outcome, res.RetryAfter, res.Held = RateLimited, wait, true
		res.saw("not sent: bookbot holds creates back to stay within the API's limits for %s", HumanDuration(wait))
		return
	}
	var created wireCreated
	status, err := c.send(ctx, ep, form, &created)
	res.Err = err

	var apiErr *APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusTooManyRequests:
		hold, every, lerr := c.throttled(ctx, req.Slot.eventType, apiErr.RetryAfter)
		res.Outcome, res.RetryAfter = RateLimited, hold
		var what string
		switch {
		case lerr != nil:
			// No reason: which limit it met is not known, and nothing is held.
			what = fmt.Sprintf("%v, so which limit it met is not known; wait %s before trying again", lerr, HumanDuration(hold))
		case every:
			res.Reason = ReasonMinuteLimit
			what = "every create is held back for " + HumanDuration(hold) + ": the limit per address, as bookbot's own attempts of the last minute before it reached it"
		default:
			res.Reason = ReasonEventLimit
			what = "creates of this event type are held back for " + HumanDuration(hold) + ": its hourly limit, as bookbot's own attempts of the last minute before it were under the limit per address"
		}
		res.saw("POST /bookings answered 429: refused by the booking service, too many attempts; %s", what)
		return
	case err == nil || errors.As(err, &apiErr):
		c.answered(ctx)
	}

	switch {
	case err == nil && status == http.StatusCreated && created.Booking == nil:
		res.saw("POST /bookings answered 201 with booking null (a flow the API does not support)")
		c.settleCreate(ctx, req, res, NotConfirmed)
	case err == nil && status == http.StatusCreated && created.Booking.BookingID != "":
		rc, perr := created.Booking.receipt()
		if perr != nil {
			res.saw("POST /bookings answered 201 with an unreadable receipt: %v", perr)
			c.settleCreate(ctx, req, res, ProbablyNotBooked)
			break
		}
		res.Receipt = &rc
		res.saw("POST /bookings answered 201 with receipt %s", rc.ID)
		c.settleCreate(ctx, req, res, Unknown)
	case err == nil:
		res.saw("POST /bookings answered %d without a usable receipt", status)
		c.settleCreate(ctx, req, res, ProbablyNotBooked)
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusConflict:
		res.saw("POST /bookings answered 409 %q (form handler status %d): not booked, and not resubmitted", apiErr.Message, apiErr.BodyStatus)
		c.settleRefused(ctx, req, res)
	case errors.Is(err, ErrFull):
		res.Reason = ReasonFull
		res.saw("POST /bookings answered %d %q (form handler status %d): not booked, as the service answers when it takes no new bookings; not resubmitted", apiErr.StatusCode, apiErr.Message, apiErr.BodyStatus)
		c.settleRefused(ctx, req, res)
	case errors.Is(err, ErrBlocked):
		res.Outcome, res.Reason = Rejected, ReasonBlocked
		res.saw("POST /bookings answered 403 %q: refused for this attendee, nothing was booked", apiErr.Message)
	case errors.Is(err, ErrInvalidInput) && req.Note == "":
		res.Outcome, res.Reason = Rejected, ReasonUnanswered
		res.saw("POST /bookings answered 400 to a create sent without a note: refused, nothing was booked; the event type may require a note or another answer")
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500:
		res.Outcome = Rejected
		res.saw("POST /bookings answered %d: refused, nothing was booked", apiErr.StatusCode)
	default: // 5xx, a 2xx that is not the JSON asked for (no booking key, say), a timeout or a dropped connection
		res.saw("POST /bookings gave no clear answer: %v", err)
		c.settleCreate(ctx, req, res, ProbablyNotBooked)
	}
}

// WithWriteTimeout bounds a create's or cancel's one request (default 30 s).
func WithWriteTimeout(d time.Duration) Option { return func(c *Client) { c.writeTimeout = d } }

// ownTime starts a write on time of its own: once a caller that has not
// given up asks for a create or cancel, each step (the list read before,
// the request, the list that settles it) has its own bound, whatever time
// the caller has left, so a caller that spent its time on reads cannot cut
// a write short into an unclear outcome. The context's values stay.
func (c *Client) ownTime(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// send makes a write's one request, within its own bound (see ownTime).
func (c *Client) send(ctx context.Context, ep endpoint, form url.Values, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.writeTimeout)
	defer cancel()
	return c.once(ctx, ep, nil, form, out)
}

// settleRefused reads the list once after a plain "not booked" (a 409, or
// the 5xx of a service that takes no new bookings): the service answers a
// 409 to a create of exactly a booking that exists, too, and the list
// confirms that nothing was booked.
func (c *Client) settleRefused(ctx context.Context, req CreateRequest, res *Result) {
	res.Outcome = NotBooked
	list, err := c.freshList(ctx)
	if err != nil {
		res.saw("GET /bookings failed, so whether it exists already could not be checked: %v", err)
		return
	}
	if found, _ := Find(list, req.Slot.eventType, req.Slot.Start, req.Email); found != nil {
		res.Outcome, res.Booking, res.Verified = AlreadyBooked, found, true
		res.saw("GET /bookings lists %s for this event, start and attendee: it was booked already", found.ID)
		return
	}
	res.saw("GET /bookings (%d listed) does not show it", len(list))
}

// Reconcile settles a write whose outcome was never recorded (bookbot
// stopped while it was in flight) by listing bookings. It never writes.
func (c *Client) Reconcile(ctx context.Context, w Write) *Result {
	res := &Result{Reconciled: true}
	switch w.Op {
	case OpCreate:
		res.saw("bookbot stopped before the answer to POST /bookings was recorded")
		slot, err := wireSlot{Start: w.Start, End: w.End}.slot(w.EventType)
		if err != nil {
			res.Outcome = Unknown
			res.saw("the journal's slot could not be read: %v", err)
			break
		}
		c.settleCreate(ctx, CreateRequest{Slot: slot, Email: w.Email}, res, ProbablyNotBooked)
	case OpCancel:
		res.saw("bookbot stopped before the answer to POST /bookings/%s/cancel was recorded", w.BookingID)
		// Without its start (zero), the booking's absence from the list
		// could as well mean it has started since bookbot stopped.
		start, _ := time.Parse(time.RFC3339Nano, w.Start)
		c.settleCancel(ctx, w.BookingID, start, false, res)
	default:
		res.Outcome = Unknown
		res.saw("the journal holds an unknown write %q", w.Op)
	}
	c.observer.Wrote(w.Op, res)
	return res
}

// Recheck looks again, in a fresh bookings list, for a create whose
// outcome was unclear: the booking an attendee has for an event at start.
// It never writes.
func (c *Client) Recheck(ctx context.Context, eventType string, start time.Time, email string) *Result {
	res := &Result{}
	c.settleCreate(ctx, CreateRequest{Slot: Slot{Start: start, eventType: eventType}, Email: email}, res, ProbablyNotBooked)
	return res
}

// settleCreate lists bookings to confirm a create. A listed booking with the
// receipt's ID and the same event, start, end and attendee email confirms
// it, and one with that ID but other fields leaves it unknown; without the
// receipt's ID listed, one with the same event, start and attendee email
// confirms it. Otherwise the outcome is absent, unless the list could
// not show it (it failed, or it is full and the slot lies beyond its end).
func (c *Client) settleCreate(ctx context.Context, req CreateRequest, res *Result, absent Outcome) {
	list, err := c.freshList(ctx)
	slot := req.Slot
	if err != nil && !errors.Is(err, ErrBadResponse) && answered(res, slot) {
		// The service answered with a receipt for this slot, and the list
		// gave no answer (one it gave and bookbot cannot read may say
		// otherwise): booked, as the service said, unchecked.
		res.Outcome, res.Reason, res.Booking = Confirmed, ReasonListUnread, receiptBooking(res, req)
		res.saw("GET /bookings could not be read, so the receipt could not be checked: booked as the service answered: %v", err)
		return
	}
	if err != nil {
		res.Outcome = Unknown
		res.saw("GET /bookings failed, so the booking could not be checked: %v", err)
		return
	}
	if res.Receipt != nil {
		for i, b := range list {
			if b.ID != res.Receipt.ID {
				continue
			}
			if b.EventType == Some(slot.eventType) && b.Start.Equal(slot.Start) && b.End.Equal(slot.End) &&
				b.BookerEmail.Valid && strings.EqualFold(b.BookerEmail.String, req.Email) {
				res.Outcome, res.Booking, res.Verified = Confirmed, &list[i], true
				res.saw("GET /bookings lists %s with the same event, start, end and attendee", b.ID)
				return
			}
			// The receipt's own booking, listed otherwise: not the one
			// asked for, and no other listed booking can stand for it.
			res.Outcome = Unknown
			res.saw("GET /bookings lists %s, but for another event, time or attendee", b.ID)
			return
		}
	}
	found, conclusive := Find(list, slot.eventType, slot.Start, req.Email)
	if found != nil {
		res.Outcome, res.Booking, res.Verified, res.Reconciled = Confirmed, found, true, true
		res.saw("GET /bookings lists %s with the same event, start and attendee", found.ID)
		return
	}
	if !conclusive && answered(res, slot) {
		// The service answered with a receipt for this slot, and the list
		// cannot show it: booked, as the service said, unchecked.
		res.Outcome, res.Reason, res.Booking = Confirmed, ReasonBeyondList, receiptBooking(res, req)
		res.saw("GET /bookings is full (%d) and the slot lies beyond its last booking, so it cannot check the receipt: booked as the service answered", len(list))
		return
	}
	if !conclusive {
		res.Outcome = Unknown
		res.saw("GET /bookings is full (%d) and the slot lies beyond its last booking, so it cannot show the booking", len(list))
		return
	}
	if !slot.Start.After(c.apiNow()) {
		res.Outcome = Unknown
		res.saw("the slot has started by the booking API's clock, and GET /bookings lists only bookings that have not started, so it cannot show whether this one was made")
		return
	}
	res.Outcome = absent
	res.saw("GET /bookings (%d listed) does not show a booking for this event, start and attendee", len(list))
}

// answered reports whether the service answered a create with a receipt
// for slot.
func answered(res *Result, slot Slot) bool {
	return res.Receipt != nil && res.Receipt.Start.Equal(slot.Start) && res.Receipt.End.Equal(slot.End)
}

// receiptBooking is the booking a create's receipt and request say was
// made, where the list cannot show it.
func receiptBooking(res *Result, req CreateRequest) *Booking {
	return &Booking{
		ID: res.Receipt.ID, Start: res.Receipt.Start, End: res.Receipt.End, Status: StatusConfirmed,
		EventType: Some(req.Slot.eventType), BookerName: Some(strings.TrimSpace(req.Name)), BookerEmail: Some(req.Email),
	}
}

// Cancel cancels a booking (POST /bookings/{id}/cancel), once, and checks
// the list to confirm it is gone. Attendees may be notified, and grouped or
// series bookings may be cancelled together with it.
//
// An error means nothing was sent (an invalid ID, a finished context, a
// journal that could not record the write).
func (c *Client) Cancel(ctx context.Context, id string) (*Result, error) {
	if err := ValidateBookingID(id); err != nil {
		return nil, err
	}
	ctx, err := c.ownTime(ctx)
	if err != nil {
		return nil, err
	}
	w := Write{Op: OpCancel, BookingID: id}
	// The booking's start tells, when settling, whether its absence from
	// the list means cancelled or only started. A booking the list does not
	// show (beyond its first 100) is still cancelled.
	var listed *Booking
	var start time.Time
	unlisted := false // the full list does not show it: it lies beyond
	list, unread := c.freshList(ctx)
	if unread == nil {
		if listed = byID(list, id); listed != nil {
			start = listed.Start
			w.Start, w.EventType, w.Name = listed.Start.UTC().Format(time.RFC3339Nano), listed.EventType.String, listed.BookerName.String
		}
		unlisted = listed == nil && len(list) >= MaxListed
	}
	if fn := listedHook(ctx); fn != nil {
		fn(listed)
	}
	ep := endpoint{"POST", "bookings/" + url.PathEscape(id) + "/cancel", "POST /bookings/{id}/cancel"}
	return c.write(ctx, w, ep, nil, nil, func(res *Result) {
		res.Booking = listed
		c.cancel(ctx, id, start, unlisted, ep, res)
		if unread != nil && res.Outcome == Cancelled && res.Booking == nil {
			// The service confirmed it; what the booking was before, the
			// list could not say.
			res.Reason = ReasonListUnread
			res.saw("GET /bookings could not be read before the cancel, so whether the booking was still upcoming is not known: %v", unread)
		}
	})
}

// cancel sends one cancel and classifies the answer. unlisted says the
// full list before it did not show the booking.
func (c *Client) cancel(ctx context.Context, id string, start time.Time, unlisted bool, ep endpoint, res *Result) {
	var out wireCancelled
	_, err := c.send(ctx, ep, nil, &out)
	res.Err = err

	var apiErr *APIError
	switch {
	case err == nil && out.Cancelled:
		res.Outcome = Cancelled
		res.saw("POST /bookings/%s/cancel answered cancelled", id)
		c.settleCancel(ctx, id, start, unlisted, res)
	case err == nil:
		res.saw("POST /bookings/%s/cancel answered without cancelled: true", id)
		c.settleCancel(ctx, id, start, unlisted, res)
	case errors.Is(err, ErrNotFound):
		res.Outcome = NotFound
		res.saw("POST /bookings/%s/cancel answered 404: no such booking for this account", id)
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusTooManyRequests:
		res.Outcome, res.RetryAfter = RateLimited, apiErr.RetryAfter
		res.saw("POST /bookings/%s/cancel answered 429", id)
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500:
		res.Outcome = Rejected
		res.saw("POST /bookings/%s/cancel answered %d: refused", id, apiErr.StatusCode)
	default:
		res.saw("POST /bookings/%s/cancel gave no clear answer: %v", id, err)
		c.settleCancel(ctx, id, start, unlisted, res)
	}
}

// settleCancel checks the list after a cancel. res.Outcome is Cancelled when
// the API said so, and empty when its answer was unclear. start is the
// booking's start as listed before the cancel, zero when it was not listed
// then: once it has passed (by the API's clock, which the list goes by), or
// when it is not known, the list (upcoming bookings only) may not show the
// booking either way, so its absence settles nothing; nor does it from
// the last start of a full list on. unlisted says the list before was full
// and did not show it: a cancel the API confirmed is then one the list
// cannot check, not one of a booking gone already.
func (c *Client) settleCancel(ctx context.Context, id string, start time.Time, unlisted bool, res *Result) {
	said := res.Outcome == Cancelled
	list, err := c.freshList(ctx)
	if err != nil {
		res.saw("GET /bookings failed, so the cancel could not be checked: %v", err)
		switch {
		case !said:
			res.Outcome = Unknown
		case unlisted:
			res.Reason = ReasonBeyondList
			res.saw("GET /bookings, full before the cancel, did not list %s: it lies beyond the first %d, where the list cannot check the cancel", id, MaxListed)
		}
		return
	}
	res.Listed = list
	for i, b := range list {
		if b.ID == id {
			res.Booking = &list[i]
			if said {
				res.Outcome = Unknown
				res.saw("GET /bookings still lists %s after the API said it was cancelled", id)
			} else {
				res.Outcome = NotCancelled
				res.saw("GET /bookings still lists %s: it was not cancelled, and cancelling again is safe", id)
			}
			return
		}
	}
	if said && unlisted {
		res.Reason = ReasonBeyondList
		res.saw("GET /bookings, full before the cancel, did not list %s: it lies beyond the first %d, where the list cannot check the cancel", id, MaxListed)
		return
	}
	// The booking's absence settles the cancel only where the list would
	// show it: before the last start of a full list.
	switch {
	case len(list) >= MaxListed && !start.Before(list[len(list)-1].Start):
		res.saw("GET /bookings is full (%d) and does not list %s; it may lie beyond the list", len(list), id)
	case start.IsZero():
		res.saw("GET /bookings does not list %s, but it did not list it before the cancel either: it may have started, and the list shows only bookings that have not", id)
	case !start.After(c.apiNow()):
		res.saw("GET /bookings does not list %s, but it started at %s, and the list shows only bookings that have not started", id, start.UTC().Format(time.RFC3339))
	default:
		res.Outcome, res.Verified = Cancelled, true
		res.Reconciled = !said
		res.saw("GET /bookings no longer lists %s", id)
		return
	}
	if !said {
		res.Outcome = Unknown
	}
}

// freshList lists bookings around a write: a list asked for now, never one
// joined in flight, within its own bound. It runs even when the caller's
// context is done, because a write to settle may have happened anyway.
func (c *Client) freshList(ctx context.Context) ([]Booking, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.reconcileTimeout)
	defer cancel()
	return c.bookings(ctx, false)
}

// Find looks in a bookings list for the booking an attendee has for an
// event at start. conclusive is false when the list is full and start lies
// beyond its last booking: then the list cannot show it either way.
func Find(list []Booking, eventType string, start time.Time, email string) (b *Booking, conclusive bool) {
	for i, l := range list {
		if l.EventType.Valid && l.EventType.String == eventType && l.Start.Equal(start) &&
			l.BookerEmail.Valid && strings.EqualFold(l.BookerEmail.String, email) {
			return &list[i], true
		}
	}
	return nil, len(list) < MaxListed || start.Before(list[len(list)-1].Start)
}
