package bot

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
)

// bookingFlow is `new` and the booking form: whatever opens it, changes in
// it, and its submission.
func bookingFlow() flow {
	// open opens the form on meta, from a message or a command.
	open := func(b *Bot, later *jobs, trigger, user string, meta modalMeta, reply func(message)) {
		later.add("new", func(ctx context.Context) { b.openBookingModal(ctx, trigger, user, meta, reply) })
	}
	// formPressed is a change in the form.
	formPressed := func(b *Bot, later *jobs, p press) {
		if p.inModal() {
			b.formChanged(later, p)
		}
	}
	// again is "Pick another time" or "Edit and try again": in the form,
	// a change in it; from the outcome message the person keeps, a new one.
	again := func(b *Bot, later *jobs, p press) {
		if !p.inModal() {
			open(b, later, p.cb.TriggerID, p.user, pickedMeta(p.a.Value), p.reply)
			return
		}
		b.formChanged(later, p)
	}
	return flow{
		commands: []command{
			{name: "new", usage: "[event]", help: "book a slot for an attendee", maxArgs: 1, run: func(b *Bot, later *jobs, c call) any {
				meta := modalMeta{}
				if len(c.args) == 1 {
					meta.Event = c.args[0]
				}
				open(b, later, c.TriggerID, c.UserID, meta, c.reply)
				return nil
			}},
		},
		actions: map[string]func(*Bot, *jobs, press){
			actionNewBooking: func(b *Bot, later *jobs, p press) {
				open(b, later, p.cb.TriggerID, p.user, modalMeta{Event: p.a.Value}, p.reply)
			},
			actionBookSlot: func(b *Bot, later *jobs, p press) {
				event, start, ok := parseSlotValue(p.a.SelectedOption.Value)
				if !ok {
					return
				}
				later.add("book-slot", func(ctx context.Context) {
					b.openBookingModal(ctx, p.cb.TriggerID, p.user, modalMeta{Event: event, Start: start}, p.reply)
				})
			},
			actionEventType:   formPressed,
			actionSlotDay:     formPressed,
			actionPickAnother: again,
			actionEditBooking: again,
			actionRecheck:     (*Bot).recheckPressed,
		},
		submissions: map[string]func(*Bot, *jobs, slack.InteractionCallback) any{
			callbackBooking: func(b *Bot, later *jobs, cb slack.InteractionCallback) any { return b.submitBooking(later, cb) },
		},
		suggestions: map[string]func(string) any{
			actionBookerTZ: func(query string) any { return zoneSuggestions(query) },
		},
		shortcuts: map[string]func(*Bot, *jobs, slack.InteractionCallback){
			callbackShortcut: func(b *Bot, later *jobs, cb slack.InteractionCallback) {
				reply := b.responder("", cb.User.ID, false)
				later.add("shortcut", func(ctx context.Context) { b.openBookingModal(ctx, cb.TriggerID, cb.User.ID, modalMeta{}, reply) })
			},
		},
	}
}

// staleSlots is how old a modal's slot list may be before a submission
// re-checks that the chosen slot is still offered.
const staleSlots = 2 * time.Minute

// form is everything the booking modal shows.
type form struct {
	meta      modalMeta
	types     []booking.EventType // nil while loading
	typesCal  string              // the calendar (calendarID) types are of
	slots     []booking.Slot      // of meta.Event; nil while loading
	loadedAt  bool                // slots were fetched (possibly empty)
	slotsErr  bool                // fetching the slots failed; problem says so
	problem   string              // why slots or types could not be loaded
	requester *time.Location
	now       time.Time
	page      string // the public booking page's address, "" when not set
}

// formChanged redraws the form after the event type or the day changed, or
// "Pick another time" was pressed in it; slots are loaded afresh unless
// only the day changed.
func (b *Bot) formChanged(later *jobs, p press) {
	v, a := p.cb.View, p.a
	f := b.formFromView(v, p.user)
	switch a.ActionID {
	case actionEventType:
		f.meta.Event, f.meta.Day, f.meta.Start = a.SelectedOption.Value, "", ""
		f.slots, f.loadedAt = nil, false
	case actionSlotDay:
		f.meta.Day, f.meta.Start = a.SelectedOption.Value, ""
	case actionPickAnother:
		f.meta.Start, f.meta.Day = "", ""
		f.slots, f.loadedAt = nil, false // fresh slots
	case actionEditBooking:
		f.meta.Day = ""
		f.slots, f.loadedAt = nil, false // the time is shown again if it is still free
	}
	b.modals.want(v.ID, f.meta.Event)
	later.add("form", func(ctx context.Context) {
		if a.ActionID != actionSlotDay {
			// Show the loading state at once; slots can take a while.
			if err := b.updateView(ctx, bookingForm(f), v.ID); err != nil {
				b.log.Info("views.update failed", "err", err)
			}
		}
		b.refreshForm(ctx, v.ID, p.user, f, false)
	})
}

// recheckPressed answers "Check again": in the modal it was pressed in
// (and as a message the person keeps), or in place of the message.
func (b *Bot) recheckPressed(later *jobs, p press) {
	var meta modalMeta
	if json.Unmarshal([]byte(p.a.Value), &meta) != nil {
		return
	}
	viewID := ""
	if p.inModal() {
		viewID = p.cb.View.ID
	}
	later.add("recheck", func(ctx context.Context) {
		if meta.Review != 0 && b.cfg.Journal != nil {
			// A review's: only the people of its calendar look, and the
			// report stays as it is for them.
			if e, err := b.cfg.Journal.Entry(meta.Review); err == nil && !b.mayReview(ctx, p.user, e) {
				p.reply(notYoursToCheck(e))
				return
			}
		}
		m := b.recheck(ctx, p.user, meta)
		if viewID != "" {
			if err := b.updateView(ctx, outcomeView(meta, m), viewID); err != nil {
				b.log.Info("views.update failed", "err", err)
			}
			b.dm(ctx, p.user, m)
			return
		}
		p.replace(m)
	})
}

// recheck looks for an unclear booking in the list again; it never books.
func (b *Bot) recheck(ctx context.Context, user string, meta modalMeta) message {
	requester := meta.requester()
	start, err := time.Parse(time.RFC3339Nano, meta.Start)
	if err != nil {
		return b.failed("This booking cannot be checked", err, button(actionPickAnother, "Pick another time", pickValue(meta)))
	}
	cal, err := b.calendarFor(ctx, user)
	if err != nil {
		return b.failed("This booking cannot be checked", err)
	}
	res := cal.Recheck(ctx, meta.Event, start, meta.Email)
	return createOutcome(meta, res, nil, requester, b.cfg.Now(), b.titles(ctx, cal), b.cfg.BookingPage, b.noticed(ctx, cal, meta.Event))
}

// openBookingModal opens the modal at once (Slack's trigger expires in 3 s),
// with what is cached, then fills in event types, slots and the requester's
// zone as they arrive.
func (b *Bot) openBookingModal(ctx context.Context, triggerID, userID string, meta modalMeta, reply func(message)) {
	requester, known := b.users.cached(userID)
	if !known {
		requester = time.UTC
	}
	types, typesCal, fresh := b.recentTypes(userID)
	f := form{meta: meta, requester: requester, now: b.cfg.Now(), page: b.cfg.BookingPage}
	if fresh {
		f.types, f.typesCal = types, typesCal
	}
	viewID, ok := b.openView(ctx, triggerID, bookingForm(f), "booking form", reply)
	if !ok {
		return
	}
	b.modals.want(viewID, meta.Event)
	b.refreshForm(ctx, viewID, userID, f, true)
}

// refreshForm loads what the form lacks and updates the modal.
func (b *Bot) refreshForm(ctx context.Context, viewID, userID string, f form, loadZone bool) {
	if loadZone {
		f.requester = b.users.zone(ctx, userID)
		if f.meta.Zone == "" {
			f.meta.Zone = f.requester.String()
		}
	}
	cal, err := b.calendarFor(ctx, userID)
	if nc, ok := errors.AsType[*NoCalendarError](err); ok {
		f.problem, f.types = nc.Error()+": "+escape(b.cfg.Command)+" connect.", []booking.EventType{}
		if err := b.updateView(ctx, bookingForm(f), viewID); err != nil {
			b.log.Warn("views.update failed", "err", err)
		}
		return
	}
	if err == nil && f.meta.Cal != "" && f.meta.Cal != cal.calendarID() {
		f.slots, f.loadedAt = nil, false // another calendar's: read this one's
	}
	if f.types == nil || (err == nil && f.typesCal != cal.calendarID()) {
		// none yet, or another calendar's (connected or disconnected since)
		var types []booking.EventType
		if err == nil {
			types, err = cal.types.get(ctx)
		}
		if err != nil {
			b.log.Warn("event types could not be loaded for the booking form", "err", err)
			f.problem = "Event types could not be loaded. " + failureText(err)
			f.types = []booking.EventType{}
		} else {
			f.types, f.typesCal = types, cal.calendarID()
		}
	}
	if f.meta.Event != "" && !f.loadedAt {
		et, ok := findType(f.types, f.meta.Event)
		switch {
		case !ok:
			f.problem = fmt.Sprintf("There is no event type %q.", f.meta.Event)
			f.meta.Event = ""
		case !et.Bookable():
			f.problem = fmt.Sprintf("%s is a %s event; book it through the public booking page.", et.Title, strings.ReplaceAll(string(et.SchedulingKind), "_", " "))
			f.meta.Event = ""
		default:
			var slots []booking.Slot
			err := err
			if err == nil {
				slots, err = cal.Slots(ctx, et.Slug)
			}
			if err != nil {
				b.log.Warn("free slots could not be loaded for the booking form", "err", err)
				f.problem = "Free slots could not be loaded. " + failureText(err)
				f.slotsErr = true
			}
			f.slots, f.loadedAt, f.meta.Cal = slots, true, ""
			if err == nil {
				f.meta.Cal = cal.calendarID()
			}
			if !b.modals.wanted(viewID, et.Slug) {
				return // the person picked another event meanwhile
			}
			if cal != nil { // the slots of a calendar read, none or some
				b.modals.putFor(viewID, cal.calendarID(), et.Slug, slots)
			}
		}
	}
	if err := b.updateView(ctx, bookingForm(f), viewID); err != nil {
		b.log.Warn("views.update failed", "err", err)
	}
}

// formFromView rebuilds the form state from a modal's metadata and inputs.
// Metadata bookbot did not sign is left out: it would be signed with the
// form made from it.
func (b *Bot) formFromView(v slack.View, user string) form {
	meta, _ := b.metaOf(v)
	in := readInputs(v)
	if in.event != "" {
		meta.Event = in.event
	}
	meta.Name, meta.Email, meta.Note = firstNonEmpty(in.name, meta.Name), firstNonEmpty(in.email, meta.Email), firstNonEmpty(in.note, meta.Note)
	meta.TZ = firstNonEmpty(in.tz, meta.TZ)
	if in.day != "" {
		meta.Day = in.day
	}
	requester := meta.requester()
	types, typesCal, _ := b.recentTypes(user)
	f := form{meta: meta, types: types, typesCal: typesCal, requester: requester, now: b.cfg.Now(), page: b.cfg.BookingPage}
	if shown, ok := b.modals.get(v.ID); ok && shown.eventType == meta.Event && shown.cal == meta.Cal {
		f.slots, f.loadedAt = shown.slots, true
	}
	return f
}

// submitBooking validates a submission in memory and answers within Slack's
// 3 s: field errors, or a "Booking…" view while the create runs.
func (b *Bot) submitBooking(later *jobs, cb slack.InteractionCallback) *slack.ViewSubmissionResponse {
	v := cb.View
	meta, ours := b.metaOf(v)
	if !ours {
		b.log.Warn("booking form submission refused: its metadata does not carry bookbot's signature", "user", cb.User.ID, "view_id", v.ID)
		return slack.NewErrorsViewSubmissionResponse(map[string]string{
			actionName: "This form did not come from bookbot as it is, so nothing was booked. Close it and open the booking form again.",
		})
	}
	in := readInputs(v)
	errs := map[string]string{}
	if in.event == "" {
		if hasInputBlock(v, actionEventType) {
			errs[actionEventType] = "Choose an event type."
		} else {
			// No event select to point at (loading, or none could be
			// loaded): errors must name an input block Slack shows.
			errs[actionName] = "There is no event type to choose yet (see the top of this form). Close it and try again."
		}
	}
	slotBlock := slotBlockID(v)
	if in.event != "" && in.slot == "" {
		errs[slotBlock] = "Choose a time."
	}
	if in.name == "" {
		errs[actionName] = "Enter the attendee's name."
	}
	if p := booking.EmailProblem(in.email); p != "" {
		errs[actionEmail] = p
	}
	if _, err := booking.LoadZone(in.tz); err != nil {
		errs[actionBookerTZ] = "Choose the attendee's time zone."
	}
	if n := booking.NoteLength(in.note); n > booking.MaxNote {
		errs[actionNote] = fmt.Sprintf("The note is %d characters long (an emoji counts as two); the limit is %d.", n, booking.MaxNote)
	}
	if len(errs) > 0 {
		return slack.NewErrorsViewSubmissionResponse(errs)
	}

	// One booking is one calendar's: the same slug, time and attendee on
	// another calendar is another booking.
	key := meta.Cal + "\x00" + in.event + "\x00" + in.slot + "\x00" + strings.ToLower(in.email)
	if !b.creating.tryLock(key) {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{
			slotBlock: "This exact booking is being made right now (another window or person). Wait for its outcome.",
		})
	}
	meta.Event, meta.Start, meta.Name, meta.Email, meta.TZ, meta.Note = in.event, in.slot, in.name, in.email, in.tz, in.note
	requester := meta.requester()
	shown, haveSlots := b.modals.get(v.ID)
	var slot booking.Slot
	fresh := false
	if haveSlots && shown.eventType == in.event && shown.cal == meta.Cal {
		slot, haveSlots = shown.find(in.slot)
		fresh = haveSlots && b.cfg.Now().Sub(shown.at) < staleSlots
	}
	userID := cb.User.ID
	viewID := v.ID
	types, _, _ := b.recentTypes(userID)
	pending := pendingView(meta, requester, b.cfg.Now(), types)
	// The outcome is shown by external_id: the view has it only once Slack
	// has applied this ack, so the outcome can never be overwritten by the
	// "Booking…" view of an ack that is still on its way.
	pending.ExternalID = fmt.Sprintf("booking-%s-%d", viewID, b.cfg.Now().UnixNano())
	asked := creation{user: userID, shownAs: pending.ExternalID, meta: meta, requester: requester, types: types}
	later.add("create", func(ctx context.Context) {
		defer b.creating.unlock(key)
		cal, err := b.calendarFor(ctx, userID)
		if err == nil && cal.calendarID() != meta.Cal {
			err = errFormCalendar
		}
		if err != nil {
			b.finishCreate(ctx, asked, nil, err)
			return
		}
		if asked.types == nil {
			// None were recent at ack time: titles come from the calendar's
			// event types, read now, never its slugs.
			asked.types = b.titles(ctx, cal)
		}
		if !fresh {
			// The list is old (or bookbot restarted): re-check the slot is offered.
			slots, err := cal.Slots(ctx, in.event)
			if err != nil {
				b.finishCreate(ctx, asked, nil, fmt.Errorf("the slot could not be re-checked, so nothing was booked: %w", err))
				return
			}
			b.modals.putFor(viewID, cal.calendarID(), in.event, slots)
			slot, haveSlots = shownSlots{slots: slots}.find(in.slot)
			if !haveSlots {
				b.finishCreate(ctx, asked, nil, errSlotGone)
				return
			}
		}
		res, err := cal.Create(booking.WithActor(ctx, userID), booking.CreateRequest{Slot: slot, Name: in.name, Email: in.email, TimeZone: in.tz, Note: in.note})
		asked.noticed = b.noticed(ctx, cal, in.event)
		b.finishCreate(ctx, asked, res, err)
		b.ReportReviews(ctx)
	})
	ack := b.signer.view(*pending)
	return slack.NewUpdateViewSubmissionResponse(b.markView(&ack))
}

// finishCreate shows the outcome in the modal (the "Booking…" view, by its
// external_id) and sends it as a message the person keeps.
func (b *Bot) finishCreate(ctx context.Context, c creation, res *booking.Result, err error) {
	// The create may have used up the work's time: telling the person what
	// happened gets its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	if res != nil {
		b.log.Info("booking create finished", "user", c.user, "result", res)
	}
	msg := createOutcome(c.meta, res, err, c.requester, b.cfg.Now(), c.types, b.cfg.BookingPage, c.noticed)
	if uerr := b.updateSubmitted(ctx, outcomeView(c.meta, msg), c.shownAs); uerr != nil {
		b.log.Info("outcome view not shown (modal closed?)", "err", slackErr(uerr))
	}
	if res != nil && res.NeedsHuman() && b.reviewsByDMTo(ctx, c.user) {
		return // the review report, right after, is their one message, with both actions
	}
	b.dm(ctx, c.user, msg)
}

// creation is a submitted booking form, as its outcome is told: who asked,
// the view showing "Booking…" (by external_id), and what was asked for.
type creation struct {
	user, shownAs string
	meta          modalMeta
	requester     *time.Location
	types         []booking.EventType
	noticed       bool // a booking made would be announced (Bot.noticed)
}

// zonesTxt lists the IANA zones the attendee zone select offers.
//
//go:embed zones.txt
var zonesTxt string

var zoneNames = sync.OnceValue(func() []string {
	var names []string
	sc := bufio.NewScanner(strings.NewReader(zonesTxt))
	for sc.Scan() {
		if z := strings.TrimSpace(sc.Text()); z != "" {
			names = append(names, z)
		}
	}
	return names
})

// zoneSuggestions answers the time zone select's search.
func zoneSuggestions(query string) map[string]any {
	q := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(query), " ", "_"))
	var opts []*slack.OptionBlockObject
	for _, z := range zoneNames() {
		if q == "" || strings.Contains(strings.ToLower(z), q) {
			opts = append(opts, zoneOption(z))
			if len(opts) == 100 {
				break
			}
		}
	}
	return map[string]any{"options": opts}
}

// bookingForm renders the booking modal. Block and action IDs are the
// contract's, and stay the same across updates so typed input survives.
func bookingForm(f form) slack.ModalViewRequest {
	var blocks []slack.Block
	if f.problem != "" {
		blocks = append(blocks, section(":warning: "+escape(f.problem)))
	}
	if f.types == nil {
		blocks = append(blocks, section(":hourglass_flowing_sand: Loading event types…"))
	} else {
		var opts []*slack.OptionBlockObject
		var initial *slack.OptionBlockObject
		for _, et := range f.types {
			if !et.Bookable() || len(opts) == 100 {
				continue
			}
			o := slack.NewOptionBlockObject(clip(et.Slug, 150), plain(clip(fmt.Sprintf("%s (%d min)", et.Title, et.DurationMinutes), 75)), nil)
			opts = append(opts, o)
			if et.Slug == f.meta.Event {
				initial = o
			}
		}
		if len(opts) == 0 {
			blocks = append(blocks, section("There are no event types bookbot can book. Team events are booked through "+publicPage(f.page)+"."))
		} else {
			sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose an event type"), actionEventType, opts...)
			sel.InitialOption = initial
			in := slack.NewInputBlock(actionEventType, plain("Event type"), nil, sel)
			in.DispatchAction = true
			blocks = append(blocks, in)
		}
	}
	if f.meta.Event != "" && f.types != nil {
		blocks = append(blocks, slotBlocks(f)...)
	}

	name := slack.NewPlainTextInputBlockElement(plain("Ada Lovelace"), actionName)
	name.InitialValue, name.MaxLength = f.meta.Name, 200
	email := slack.NewEmailTextInputBlockElement(plain("ada@example.com"), actionEmail)
	email.InitialValue = f.meta.Email
	tz := slack.NewOptionsSelectBlockElement(slack.OptTypeExternal, plain("Type a city, e.g. Berlin"), actionBookerTZ)
	zone := f.meta.TZ
	if zone == "" {
		zone = f.requester.String()
	}
	tz.InitialOption = zoneOption(zone)
	minQuery := 1
	tz.MinQueryLength = &minQuery
	note := slack.NewPlainTextInputBlockElement(plain("Agenda, context, links…"), actionNote)
	note.Multiline, note.MaxLength, note.InitialValue = true, booking.MaxNote, f.meta.Note
	noteBlock := slack.NewInputBlock(actionNote, plain("Note to the host"), plain("Shared with the host; some event types require one. Up to 2000 characters (an emoji counts as two)."), note)
	noteBlock.Optional = true

	blocks = append(blocks,
		slack.NewInputBlock(actionName, plain("Attendee's name"), nil, name),
		slack.NewInputBlock(actionEmail, plain("Attendee's email"), plain("The attendee gets a real invitation at this address."), email),
		slack.NewInputBlock(actionBookerTZ, plain("Attendee's time zone"), nil, tz),
		noteBlock,
		contextLine(fmt.Sprintf("Times are shown in your zone, %s. Booking sends a real invitation to the attendee.", formZone(f))),
	)
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackBooking,
		Title:           plain("New booking"),
		Submit:          plain("Book and invite"),
		Close:           plain("Cancel"),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: f.meta.encode(),
		NotifyOnClose:   true,
	}
}

// formZone names the requester's zone for the times the form offers.
func formZone(f form) string {
	if f.meta.Event == "" || len(f.slots) == 0 {
		return zoneName(f.requester, f.now, f.now)
	}
	return zoneName(f.requester, f.slots[0].Start, f.slots[len(f.slots)-1].End)
}

// slotBlocks is the day select and the slot select of the chosen day, each
// within 100 options.
func slotBlocks(f form) []slack.Block {
	if !f.loadedAt {
		return []slack.Block{section(":hourglass_flowing_sand: Loading free slots…")}
	}
	if f.slotsErr {
		return nil // the problem at the top says why there are none
	}
	if len(f.slots) == 0 {
		return []slack.Block{section("No free slots in the next 14 days for this event type.")}
	}
	days := groupByDay(f.slots, f.requester, f.now)
	if len(days) > 100 {
		days = days[:100]
	}
	day := days[0]
	for _, d := range days {
		if d.key == f.meta.Day {
			day = d
		}
	}
	if f.meta.Start != "" && f.meta.Day == "" {
		for _, d := range days {
			for _, s := range d.slots {
				if s.RawStart() == f.meta.Start {
					day = d
				}
			}
		}
	}
	// Options cannot show date tokens: when the clocks change among the
	// days, a day in another zone abbreviation than the first says so, and
	// the day of the change gives each time its own.
	base := days[0].start().In(f.requester).Format("MST")
	var dayOpts []*slack.OptionBlockObject
	var dayInitial *slack.OptionBlockObject
	changes := false // the clocks change among the days
	for _, d := range days {
		label := fmt.Sprintf("%s (%d free)", d.label, len(d.slots))
		if note := zoneNote(d.zones(f.requester), base); note != "" {
			label = fmt.Sprintf("%s (%d free, %s)", d.label, len(d.slots), note)
			changes = true
		}
		o := slack.NewOptionBlockObject(d.key, plain(label), nil)
		dayOpts = append(dayOpts, o)
		if d.key == day.key {
			dayInitial = o
		}
	}
	daySel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Day"), actionSlotDay, dayOpts...)
	daySel.InitialOption = dayInitial
	dayBlock := slack.NewInputBlock(actionSlotDay, plain("Day"), nil, daySel)
	dayBlock.DispatchAction = true

	zones := day.zones(f.requester)
	var slotOpts []*slack.OptionBlockObject
	var slotInitial *slack.OptionBlockObject
	for _, s := range day.slots[:min(len(day.slots), 100)] {
		o := slack.NewOptionBlockObject(s.RawStart(), plain(slotLabel(s, f.requester, len(zones) > 1)), nil)
		slotOpts = append(slotOpts, o)
		if s.RawStart() == f.meta.Start {
			slotInitial = o
		}
	}
	slotSel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Time"), actionSlot, slotOpts...)
	slotSel.InitialOption = slotInitial
	// The block ID carries the day, so switching days resets the time pick
	// instead of keeping a time from another day.
	label := "Time (" + f.requester.String() + ")"
	if changes && len(zones) == 1 {
		label = "Time (" + f.requester.String() + ", " + zones[0] + ")"
	}
	slotBlock := slack.NewInputBlock(actionSlot+"_"+day.key, plain(label), nil, slotSel)
	return []slack.Block{dayBlock, slotBlock}
}

func zoneOption(name string) *slack.OptionBlockObject {
	return slack.NewOptionBlockObject(name, plain(strings.ReplaceAll(name, "_", " ")), nil)
}

// slotBlockID finds the block ID of the slot select, for error messages.
// It goes by the action ID: the day select's block ID ("slot_day") starts
// like the slot select's ("slot_<day>").
func slotBlockID(v slack.View) string {
	if v.State != nil {
		for blockID, actions := range v.State.Values {
			if _, ok := actions[actionSlot]; ok {
				return blockID
			}
		}
	}
	for _, bl := range v.Blocks.BlockSet {
		if in, ok := bl.(*slack.InputBlock); ok && strings.HasPrefix(in.BlockID, actionSlot+"_") && in.BlockID != actionSlotDay {
			return in.BlockID
		}
	}
	return actionEventType
}

// hasInputBlock reports whether the modal shows an input block with this ID.
func hasInputBlock(v slack.View, blockID string) bool {
	for _, bl := range v.Blocks.BlockSet {
		if in, ok := bl.(*slack.InputBlock); ok && in.BlockID == blockID {
			return true
		}
	}
	return false
}

func pendingView(meta modalMeta, requester *time.Location, now time.Time, types []booking.EventType) *slack.ModalViewRequest {
	// Replicas keep this view for a redelivery (Seen.KeepAck), and the note
	// and the attendee's zone are never written down; the view has no
	// action that would read them.
	meta.Note, meta.TZ = "", ""
	text := fmt.Sprintf(":hourglass_flowing_sand: Booking *%s* for %s…\nYou can close this window: the outcome also comes to you as a message from bookbot.",
		short(titleOf(booking.Some(meta.Event), types)), short(meta.Name))
	if t, err := time.Parse(time.RFC3339Nano, meta.Start); err == nil {
		text = fmt.Sprintf(":hourglass_flowing_sand: Booking *%s* %s for %s…\nYou can close this window: the outcome also comes to you as a message from bookbot.",
			short(titleOf(booking.Some(meta.Event), types)), at(t, now, requester, true), short(meta.Name))
	}
	return &slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackBooking,
		Title:           plain("New booking"),
		Close:           plain("Close"),
		Blocks:          slack.Blocks{BlockSet: []slack.Block{section(text)}},
		PrivateMetadata: meta.encode(),
	}
}

func outcomeView(meta modalMeta, msg message) slack.ModalViewRequest {
	msg.Blocks = slices.DeleteFunc(slices.Clone(msg.Blocks), func(b slack.Block) bool {
		a, ok := b.(*slack.ActionBlock)
		return ok && a.BlockID == nextActions
	})
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackBooking,
		Title:           plain("New booking"),
		Close:           plain("Done"),
		Blocks:          slack.Blocks{BlockSet: msg.Blocks},
		PrivateMetadata: meta.encode(),
	}
}
