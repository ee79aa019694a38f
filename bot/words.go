package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/personal"
)

// nextActions is the block of what comes after a booking, in the message
// the person keeps; the modal, about to be closed, does without it.
const nextActions = "next_actions"

// createOutcome says what happened to a booking, for the modal and for the
// message the person keeps, where now is. res is nil when nothing was sent
// (err says why).
// noticed says a booking of the kind asked for would be announced by a
// live notice, which the words may then point to.
func createOutcome(meta modalMeta, res *booking.Result, err error, requester *time.Location, now time.Time, types []booking.EventType, page string, noticed bool) message {
	title := short(titleOf(booking.Some(meta.Event), types))
	attendee := short(meta.Name) + " (" + address(meta.Email) + ")"
	start, _ := time.Parse(time.RFC3339Nano, meta.Start)
	slotText := at(start, now, requester, true)
	var text, small string
	var actions []slack.BlockElement
	var next *slack.ActionBlock // what people do after a booking: look, undo, book again
	pick := button(actionPickAnother, "Pick another time", pickValue(meta))
	recheck := button(actionRecheck, "Check again", recheckValue(meta))
	// again opens the form as it was, time included; nothing is sent until
	// the person submits it.
	again := func(label string) *slack.ButtonBlockElement { return button(actionEditBooking, label, formValue(meta)) }
	switch {
	case res == nil:
		text = fmt.Sprintf(":x: *Not booked.* %s %s for %s. %s", title, slotText, attendee, escape(failureText(err)))
		switch {
		case errors.Is(err, errFormCalendar):
			actions = append(actions, again("Open the form again"))
		case !errors.Is(err, errSlotGone):
			actions = append(actions, again("Try again"))
		}
		actions = append(actions, pick)
	case res.Outcome == booking.DryRun:
		text = fmt.Sprintf(":test_tube: *Dry run: nothing was booked.* %s %s for %s. %s", title, slotText, attendee, wouldSend(res.WouldSend))
		actions = append(actions, pick)
	case res.Outcome == booking.Confirmed:
		bk := res.Booking
		attZone := requester
		if loc, err := booking.LoadZone(meta.TZ); err == nil {
			attZone = loc
		}
		text = fmt.Sprintf(":white_check_mark: *Booked.* %s with %s\n%s", title, attendee, bookedTimes(*bk, requester, attZone, now))
		switch {
		case res.Reason == booking.ReasonBeyondList:
			text += "\n_The booking service answered with this booking. bookbot could not check it in the bookings list, which shows only the first 100 upcoming bookings: this one lies beyond them._"
		case res.Reason == booking.ReasonListUnread:
			text += "\n_The booking service answered with this booking. bookbot could not check it in the bookings list, which could not be read just then._"
		case res.Reconciled:
			text += "\n_The API's answer was unclear; the booking was confirmed by finding it in the bookings list._"
		}
		next = slack.NewActionBlock(nextActions, button(actionShowList, "Upcoming bookings", ""),
			button(actionNewBooking, "Book another", meta.Event), cancelMenu(bk.ID))
	case res.Outcome == booking.AlreadyBooked:
		text = alreadyBookedText(title, slotText, attendee, start, res, requester, now)
		actions = append(actions, pick)
	case res.Outcome == booking.NotBooked && res.Conflict() == booking.ConflictTimeNotFree:
		text = fmt.Sprintf(":x: *Not booked: that time is not free.* %s %s for %s: the time was just taken, has passed, or is no longer offered as shown. Pick another time.", title, slotText, attendee)
		actions = append(actions, pick)
	case res.Outcome == booking.NotBooked && res.Conflict() == booking.ConflictRefused:
		text = fmt.Sprintf(":envelope: *Not booked yet: the attendee may need to confirm by email.* %s %s for %s.\nThe booking service answers so in two cases: the attendee had this booking before (even one cancelled since), or the event type needs them to confirm their email address, and the service has mailed them a link that books this time. Check with the attendee before booking another time: their link may still book this one.", title, slotText, attendee)
		small = "The service gives the same answer every time, so bookbot does not send it again."
		if noticed {
			small += " If the booking appears, its notice says it came after this attempt."
		}
		actions = append(actions, pick)
	case res.Outcome == booking.NotBooked && res.Reason == booking.ReasonFull:
		text = fmt.Sprintf(":no_entry: *Not booked: the booking service takes no new bookings.* %s %s for %s was not booked. The service answered that it refuses new bookings, as it does once the calendar holds as many confirmed bookings as it takes, so another try will meet the same answer until bookings end or are cancelled. Tell the calendar's owner.", title, slotText, attendee)
		actions = append(actions, button(actionShowList, "Upcoming bookings", ""))
	case res.Outcome == booking.NotBooked:
		text = fmt.Sprintf(":x: *Not booked.* %s %s for %s: the slot may just have been taken, the booking may be a duplicate, or the event may need email verification. bookbot does not resubmit it; pick another time.", title, slotText, attendee)
		actions = append(actions, pick)
	case res.Outcome == booking.NotConfirmed:
		text = fmt.Sprintf(":x: *Not confirmed.* %s %s for %s: the booking service did not confirm it, as happens when an event type asks for more than bookbot's form sends (answers to required questions, an email confirmation, a team's calendar), and the bookings list does not show it. Book it through %s.", title, slotText, attendee, publicPage(page))
		actions = append(actions, pick)
	case res.Outcome == booking.Rejected && res.Reason == booking.ReasonBlocked:
		text = fmt.Sprintf(":no_entry: *Not booked: the booking service refused this booking for this attendee.* %s %s for %s. The likely cause is the calendar owner's settings, which can refuse an attendee's email address or its whole domain (%s). Check the address with the attendee, or ask the calendar's owner.", title, slotText, attendee, escape(clip(domainOf(meta.Email), maxEmailRunes)))
		actions = append(actions, again("Edit and try again"), pick)
	case res.Outcome == booking.Rejected && res.Reason == booking.ReasonUnanswered:
		text = fmt.Sprintf(":x: *Not booked: the booking service refused the form.* %s %s for %s. It gives no reason, and this booking went without a note: the event type may require one, or an answer to a question bookbot cannot send. Add a note and book again, or have the attendee book through %s, which asks every question.", title, slotText, attendee, publicPage(page))
		actions = append(actions, again("Add a note"), pick)
	case res.Outcome == booking.Rejected:
		text = fmt.Sprintf(":x: *Refused by the booking service.* %s %s for %s was not booked: %s", title, slotText, attendee, escape(failureText(res.Err)))
		actions = append(actions, again("Edit and try again"), pick)
	case res.Outcome == booking.RateLimited && res.Held && errors.Is(res.Err, booking.ErrLimitUnchecked):
		text = fmt.Sprintf(":stopwatch: *Not sent: the booking limit could not be checked.* bookbot keeps bookings within what the booking service takes, and could not check that just now. Nothing was booked. Try again in %s.", waitText(res.RetryAfter))
		actions = append(actions, again("Open the form again"), pick)
	case res.Outcome == booking.RateLimited && res.Held:
		text = fmt.Sprintf(":stopwatch: *Not sent.* The booking service takes only a few bookings at a time, and bookbot held this one back so that it is not turned away. Nothing was booked. Try again in %s.", waitText(res.RetryAfter))
		actions = append(actions, again("Open the form again"), pick)
	case res.Outcome == booking.RateLimited && res.Reason == booking.ReasonEventLimit:
		text = fmt.Sprintf(":stopwatch: *Refused by the booking service: too many attempts for this event type.* %s %s for %s was not booked. The service takes only so many attempts an hour for each event type, from everyone and failed ones included, and that can take up to an hour to clear. bookbot holds bookings of %s back for %s; other event types can be booked now.", title, slotText, attendee, title, waitText(res.RetryAfter))
		actions = append(actions, button(actionNewBooking, "Book another event type", ""))
	case res.Outcome == booking.RateLimited && res.Reason == booking.ReasonMinuteLimit:
		text = fmt.Sprintf(":stopwatch: *Refused by the booking service: too many attempts a minute.* Nothing was booked. The service takes only a few booking attempts a minute from bookbot, failed ones included, so bookbot holds every booking back for %s. Try again then.", waitText(res.RetryAfter))
		actions = append(actions, again("Open the form again"), pick)
	case res.Outcome == booking.RateLimited:
		text = fmt.Sprintf(":stopwatch: *Refused by the booking service: too many attempts.* Nothing was booked. Try again in %s.", waitText(res.RetryAfter))
		actions = append(actions, again("Open the form again"), pick)
	case res.Outcome == booking.ProbablyNotBooked:
		text = fmt.Sprintf(":warning: *Probably not booked: check before trying again.* %s %s for %s. The booking service did not answer clearly, and the bookings list does not show this booking. A person should check the calendar (and the attendee's inbox) before booking it again.", title, slotText, attendee)
		actions = append(actions, recheck)
	default:
		text = fmt.Sprintf(":warning: *Outcome unknown: a person must check.* %s %s for %s. bookbot could not tell whether it was booked. Do not book it again until someone has checked the calendar.", title, slotText, attendee)
		actions = append(actions, recheck)
	}
	blocks := []slack.Block{section(text)}
	if small != "" {
		blocks = append(blocks, contextLine(small))
	}
	if meta.Review != 0 {
		actions = append(actions, reviewButton(meta.Review))
	}
	if len(actions) > 0 {
		blocks = append(blocks, slack.NewActionBlock("outcome_actions", actions...))
	}
	if next != nil {
		blocks = append(blocks, next)
	}
	// The notification says the headline with the data as it is: stripping
	// the markup from the whole text would strip it from names too.
	fallback := headline(text) + " " + title + " " + atPlain(start, now, requester) + " for " + short(meta.Name)
	return message{Text: fallback, Blocks: blocks}
}

// bookedTimes says when a booking is, in the person's zone and in the
// attendee's: once, when the attendee's zone shows the same times, as the
// form's default zone does; otherwise the attendee's times in their own
// words, with their day when it is another.
func bookedTimes(b booking.Booking, yours, theirs *time.Location, now time.Time) string {
	when := spanAt(b.Start, b.End, now, yours)
	_, so1 := b.Start.In(yours).Zone()
	_, eo1 := b.End.In(yours).Zone()
	_, so2 := b.Start.In(theirs).Zone()
	_, eo2 := b.End.In(theirs).Zone()
	if so1 == so2 && eo1 == eo2 {
		return "*When:* " + when + ", for you and the attendee alike"
	}
	from, to, sep := rangeText(b.Start, b.End, theirs, false)
	day := ""
	switch y, t := dateOf(b.Start, yours), dateOf(b.Start, theirs); {
	case t.Before(y):
		day = " the day before"
	case y.Before(t):
		day = " the day after"
	}
	return "*Your time:* " + when + "\n*Attendee's time:* " + from + sep + to + day + ", in " + escape(theirs.String())
}

// dateOf is the day of t in loc, as midnight UTC, so days in two zones
// compare.
func dateOf(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// headline is an outcome text's bold opening phrase, which every outcome
// text has and which holds no data.
func headline(text string) string {
	_, rest, _ := strings.Cut(text, "*")
	head, _, _ := strings.Cut(rest, "*")
	return head
}

// alreadyBookedText says why a create was not sent: the booking exists, is
// being made, or an earlier unclear attempt waits for a person.
func alreadyBookedText(title, slotText, attendee string, start time.Time, res *booking.Result, requester *time.Location, now time.Time) string {
	p, bk := res.Prior, res.Booking
	by := "outside bookbot (the booking page or another tool)"
	if p != nil {
		by = "in Slack " + at(p.At, now, requester, true)
		if p.Actor != "" {
			by = "by " + mention(p.Actor) + " in Slack " + at(p.At, now, requester, true)
		}
	}
	// What the list shows comes first: an earlier attempt whose outcome
	// was not recorded yet did book it if the list shows it.
	switch {
	case bk != nil && bk.Start.Equal(start) && res.Err != nil:
		return fmt.Sprintf(":information_source: *Already booked.* %s %s for %s exists, booked %s. The booking service refused to book it again; nothing new was booked.", title, slotText, attendee, by)
	case bk != nil && bk.Start.Equal(start):
		return fmt.Sprintf(":information_source: *Already booked.* %s %s for %s exists, booked %s. Nothing was sent.", title, slotText, attendee, by)
	case p != nil && p.Outcome == "":
		return fmt.Sprintf(":hourglass_flowing_sand: *Already being booked.* %s %s for %s was asked for %s and is on its way; its outcome goes to whoever asked. Nothing was sent again.", title, slotText, attendee, by)
	case p != nil && p.Outcome != booking.Confirmed:
		return fmt.Sprintf(":warning: *Not sent: an earlier attempt needs checking first.* %s %s for %s was tried %s, and whether it went through is unclear. Nothing was sent, so the attendee cannot be booked twice. Once someone has checked the calendar and pressed *Mark as checked* on its review, it can be booked again.", title, slotText, attendee, by)
	case bk != nil:
		return fmt.Sprintf(":information_source: *Already booked, at another time.* %s for %s was booked for %s %s, and has since moved to %s. Nothing was sent.", title, attendee, at(start, now, requester, false), by, at(bk.Start, now, requester, false))
	default:
		return fmt.Sprintf(":information_source: *Booked before.* %s %s for %s was booked %s, and the bookings list no longer shows it: it was cancelled or moved outside Slack, or lies beyond the list's first 100. The booking service refuses the same attendee at the same time again, so nothing was sent; pick another time.", title, slotText, attendee, by)
	}
}

// cancelOutcomeMessage replaces the confirmation (or the card the Cancel
// was pressed on) with what happened: to what, by event, attendee and
// time when the list showed the booking, who cancelled it and when, and
// what to do next. The service answers a repeat cancel as it answers the
// first, so a cancel it confirmed of a booking the list did not show
// before is not called bookbot's doing: it may have changed nothing.
func cancelOutcomeMessage(id, by string, res *booking.Result, types []booking.EventType, loc *time.Location, now time.Time) message {
	what, push := "This booking", "" // push: the notification's words after the head, "" for none
	if b := res.Booking; b != nil {
		what = bookingWhat(*b, types, spanAt(b.Start, b.End, now, loc))
		push = bookingWhat(*b, types, dayTime(b.Start, now, loc))
	}
	actions := []slack.BlockElement{upcomingButton()}
	var head, text string
	switch {
	case res.Outcome == booking.DryRun:
		head = "Dry run, nothing cancelled"
		text = fmt.Sprintf(":test_tube: *Dry run: nothing was cancelled.* %s", wouldSend(res.WouldSend))
		if res.Booking != nil {
			text += "\nIt would have cancelled: " + what + "."
		} else {
			text += "\nThis booking is not among the upcoming bookings: it was cancelled already, has passed, or is not on this calendar."
		}
	case res.Outcome == booking.Cancelled && res.Booking != nil:
		// The card stays: what it was, its time struck through, who
		// cancelled it and when.
		b := res.Booking
		head = "Cancelled"
		text = fmt.Sprintf(":wastebasket: *Cancelled:* %s\n~%s~\nCancelled by %s %s.", bookingWhat(*b, types, ""), spanAt(b.Start, b.End, now, loc), mention(by), at(now, now, loc, true))
		if !res.Verified {
			text += "\nThe booking service confirmed it; the bookings list could not confirm it too."
		}
		if b.EventType.Valid {
			actions = append([]slack.BlockElement{button(actionPickAnother, "Book again", pickValue(bookAgainMeta(*b)))}, actions...)
		}
	case res.Outcome == booking.Cancelled && res.Reason == booking.ReasonBeyondList:
		head, push = "Cancelled", "the booking service answered that it is cancelled"
		text = ":wastebasket: *Cancelled.* The booking service answered that this booking is cancelled. bookbot could not check it in the bookings list, which shows only the first 100 upcoming bookings and did not show this one: it lies beyond them, unless it was cancelled already."
	case res.Outcome == booking.Cancelled && res.Reason == booking.ReasonListUnread:
		head, push = "Cancelled", "the booking service answered that it is cancelled"
		text = ":wastebasket: *Cancelled.* The booking service answered that this booking is cancelled. bookbot could not read the bookings list before the cancel, so it cannot say which booking this was, nor whether it was still upcoming."
	case res.Outcome == booking.Cancelled:
		head, push = "Cancel answered", "the booking was not among the upcoming bookings, so it may have been cancelled already"
		text = ":information_source: *The booking service answers that this booking is cancelled.* It was not among the upcoming bookings bookbot saw before, so this cancel may have changed nothing: it was most likely cancelled already."
	case res.Outcome == booking.NotFound:
		head, push = "Not found", "nothing was cancelled"
		text = ":grey_question: *Not found: nothing was cancelled.* The booking service knows no such booking on this calendar."
	case res.Outcome == booking.NotCancelled:
		head = "Not cancelled"
		text = ":x: *Not cancelled:* " + what + " is still listed. Cancelling again is safe."
		actions = append([]slack.BlockElement{cancelButton(id)}, actions...)
	case res.Outcome == booking.RateLimited:
		head = "Not cancelled"
		text = fmt.Sprintf(":stopwatch: *Not cancelled: the booking service is busy.* %s is unchanged. Try again in %s.", what, waitText(res.RetryAfter))
	case res.Outcome == booking.Rejected:
		head = "Not cancelled"
		text = fmt.Sprintf(":x: *Not cancelled: the booking service refused.* %s is unchanged. %s", what, escape(failureText(res.Err)))
	default:
		head = "Unclear whether it was cancelled"
		text = ":warning: *Unclear whether it was cancelled:* " + what + ". Check whether it is still listed before trying again."
		actions = append([]slack.BlockElement{button(actionCancelCheck, "Check again", id)}, actions...)
	}
	return message{
		Text: strings.TrimSuffix(head+": "+push, ": ") + ".",
		Blocks: []slack.Block{
			section(text),
			slack.NewActionBlock("cancel_outcome", actions...),
		},
	}
}

// bookingWhat names a booking in a sentence: its event, its attendee and
// when, as when says it.
func bookingWhat(b booking.Booking, types []booking.EventType, when string) string {
	s := short(titleOf(b.EventType, types))
	if s == "" {
		s = "A booking"
	}
	if name := short(b.BookerName.String); name != "" {
		s += " with " + name
	}
	if when == "" {
		return s
	}
	return s + ", " + when
}

// dayTime is a moment as a notification says it, in loc: "today 11:00",
// "tomorrow 09:30", "Wed 25 Mar 14:00".
func dayTime(t, now time.Time, loc *time.Location) string {
	day := dayLabel(t, now, loc)
	if day == "Today" || day == "Tomorrow" {
		day = strings.ToLower(day)
	}
	return day + " " + t.In(loc).Format(timeLayout)
}

func waitText(d time.Duration) string {
	if d <= 0 {
		return "a while (an event's limit can take up to an hour)"
	}
	return booking.HumanDuration(d)
}

// outcomeText names an entry's outcome for people.
func outcomeText(e journal.Entry) string {
	var s string
	switch e.Outcome {
	case "":
		s = "in flight (no answer recorded yet)"
	case booking.Confirmed:
		s = "booked, and the bookings list shows it"
		switch e.Reason {
		case booking.ReasonBeyondList:
			s = "booked, as the booking service answered with its receipt; it lies beyond the first 100 upcoming bookings the list shows, so bookbot could not check it there"
		case booking.ReasonListUnread:
			s = "booked, as the booking service answered with its receipt; the bookings list could not be read, so bookbot could not check it there"
		}
	case booking.NotBooked:
		switch {
		case e.Reason == booking.ReasonFull:
			s = "not booked: the booking service takes no new bookings (the calendar holds as many confirmed bookings as it takes)"
		case e.Conflict == booking.ConflictTimeNotFree:
			s = "not booked: the time was not free"
		case e.Conflict == booking.ConflictRefused:
			s = "not booked yet: the attendee had this booking before, or must confirm their email address with the link the booking service mailed them, which books this time"
		default:
			s = "not booked (409: taken, a duplicate, or needs email verification)"
		}
	case booking.NotConfirmed:
		s = "not confirmed (the API returned no booking)"
	case booking.Rejected:
		switch e.Reason {
		case booking.ReasonBlocked:
			s = "not booked: the booking service refused it for this attendee (the owner's settings may refuse their address or its domain)"
		case booking.ReasonUnanswered:
			s = "not booked: the booking service refused the form, sent without a note, which the event type may require"
		default:
			s = "refused by the booking service"
		}
	case booking.RateLimited:
		switch {
		case e.Held:
			s = "not sent: bookbot's own rate guard held it back"
		case e.Reason == booking.ReasonEventLimit:
			s = "refused by the booking service: too many attempts for this event type, whose limit can take up to an hour to clear"
		case e.Reason == booking.ReasonMinuteLimit:
			s = "refused by the booking service: too many attempts a minute"
		default:
			s = "refused by the booking service: too many attempts"
		}
	case booking.ProbablyNotBooked:
		s = "probably not booked: the answer was unclear and the bookings list does not show it"
	case booking.Unknown:
		s = "unknown: the answer was unclear and listing could not settle it"
	case booking.Cancelled:
		s = "cancelled"
		switch {
		case e.Reason == booking.ReasonBeyondList:
			s += ", as the booking service answered; the list, which shows the first 100 upcoming bookings, did not show it (it lies beyond them, unless it was cancelled already), so bookbot could not check it there"
		case e.Reason == booking.ReasonListUnread:
			s += ", as the booking service answered; the bookings list could not be read before it, so bookbot cannot say which booking it was"
		case !e.Verified:
			s += " (not confirmed by the list)"
		}
	case booking.NotCancelled:
		s = "not cancelled: the booking is still listed"
	case booking.NotFound:
		s = "not found"
	case booking.DryRun:
		s = "dry run: nothing was sent"
	case booking.AlreadyBooked:
		s = "not sent: already booked, or an earlier attempt stands in the way"
	default:
		s = escape(string(e.Outcome)) // as the journal has it
	}
	return s
}

func reviewAdvice(e journal.Entry) string {
	switch {
	case e.Outcome == booking.Confirmed && e.Reason == booking.ReasonBeyondList:
		return "nothing to book again: the booking service booked it. The API asks that a person look at a booking beyond the first 100, so open the calendar once to see it there."
	case e.Outcome == booking.Confirmed && e.Reason == booking.ReasonListUnread:
		return "nothing to book again: the booking service booked it. bookbot could not read the bookings list to check it, so open the calendar once to see it there."
	}
	switch e.Outcome {
	case booking.Confirmed:
		return "nothing to book again: the booking exists. Make sure the person who asked knows."
	case booking.Cancelled:
		return "nothing: the booking is no longer listed."
	case booking.NotCancelled:
		return "cancel it again if it should go (a repeat cancel is harmless)."
	case booking.ProbablyNotBooked:
		return "check the calendar and the attendee's inbox. If the booking is not there and is still wanted, book it again with the booking form."
	default:
		return "check the calendar before anyone tries this again; the booking service's answer did not settle it."
	}
}

// notYoursToCheck answers a review's button pressed by someone who does
// not act on its calendar.
func notYoursToCheck(e journal.Entry) message {
	whose := "the owner's calendar"
	if e.CalendarOf() != booking.Owner && e.Calendar != "" {
		whose = mention(e.Calendar) + "'s calendar"
	}
	text := "Only people acting on " + whose + " can check this write, and you act on another calendar: nothing was changed. `account` says which calendar you act on."
	return message{Text: "Only people acting on that calendar can check this write: nothing was changed.", Blocks: []slack.Block{section(":lock: " + text)}}
}

// domainOf is the part of an email address after its @.
func domainOf(email string) string {
	_, domain, _ := strings.Cut(email, "@")
	return domain
}

// keptMessage answers "Keep it" on a cancel confirmation.
func keptMessage() message {
	return message{Text: "Kept: nothing was cancelled.", Blocks: []slack.Block{
		section(":ok_hand: *Kept.* Nothing was cancelled."),
		slack.NewActionBlock("kept_actions", upcomingButton()),
	}}
}

// said is an error bookbot words for the person it answers; any other
// error is said in general words, its detail left to the log.
type said string

func (s said) Error() string { return string(s) }

// What a booking form's outcome says when nothing was sent.
var (
	errSlotGone     error = said("that time is no longer free; nothing was booked")
	errFormCalendar error = said("the calendar you act on changed since this form read its times (a calendar was connected or disconnected), so nothing was booked. Open the form again to see the times of the calendar you act on now")
)

// failureText says in words what an error from the booking client means
// for the person and what they can do; the technical detail is for the log.
func failureText(err error) string {
	var invalid booking.ValidationError
	var words said
	switch {
	case err == nil:
		return "No details."
	case errors.As(err, new(*NoCalendarError)):
		return err.Error() + "."
	case errors.As(err, &words):
		return words.Error() + "."
	case errors.As(err, &invalid):
		return invalid.Error() + "."
	case errors.Is(err, booking.ErrUnauthorized):
		return "The booking service refused bookbot's key: the calendar's owner needs to put a working one in place (bookbot check shows what is wrong)."
	case errors.Is(err, booking.ErrRateLimited):
		return "The booking service asks bookbot to slow down. Try again in a minute."
	case errors.Is(err, booking.ErrUnavailable):
		return "The booking service is not answering right now. Try again in a few minutes."
	case errors.Is(err, booking.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "The booking service did not answer in time. Try again in a minute."
	case errors.Is(err, booking.ErrTransport):
		return "bookbot could not reach the booking service. Try again in a few minutes; if it keeps happening, tell the calendar's owner."
	case errors.Is(err, booking.ErrTooLarge):
		return "The request was too large for the booking service: shorten the note."
	case errors.Is(err, booking.ErrInvalidInput):
		return "The booking service found the input invalid (it does not say which part): check the attendee's name, email, time zone and note."
	case errors.Is(err, booking.ErrBlocked):
		return "The booking service refused this booking for this attendee: the calendar owner's settings may refuse their email address or its domain."
	case errors.Is(err, booking.ErrFull):
		return "The booking service takes no new bookings: the calendar holds as many confirmed bookings as it takes. Tell the calendar's owner."
	case errors.Is(err, booking.ErrForbidden):
		return "The booking service refused access."
	case errors.Is(err, booking.ErrNotFound):
		return "It was not found: it does not exist, or it is not this calendar's."
	case errors.Is(err, booking.ErrBadResponse):
		return "The booking service gave an answer bookbot cannot read. The calendar's owner can find the details in bookbot's log."
	}
	// What else goes wrong is bookbot's own trouble (its journal, its
	// database): the detail is for the log, not the person.
	return "Something went wrong inside bookbot. Try again in a few minutes; if it keeps happening, tell the calendar's owner, who finds the details in bookbot's log."
}

// errorMessage says what failed and what to do, in words, and offers next,
// the next step (usually the same request again); the error itself goes
// to the log (see Bot.failed).
func errorMessage(what string, err error, next ...slack.BlockElement) message {
	text := escape(what + ". " + failureText(err))
	blocks := []slack.Block{section(":warning: " + text)}
	if len(next) > 0 {
		blocks = append(blocks, slack.NewActionBlock("error_actions", next...))
	}
	return message{Text: text, Blocks: blocks}
}

// failed is errorMessage for a person, with the error itself in the log,
// where the technical detail the message leaves out can be found.
func (b *Bot) failed(what string, err error, next ...slack.BlockElement) message {
	if nc, ok := errors.AsType[*NoCalendarError](err); ok {
		return noCalendarMessage(nc)
	}
	b.log.Warn(what, "err", err)
	return errorMessage(what, err, next...)
}

// leadWords is how long before a booking, as a person says it: "15
// minutes", "1 hour 30 minutes", "1 day".
func leadWords(d time.Duration) string {
	if d == 24*time.Hour {
		return "1 day"
	}
	var parts []string
	if h := int(d / time.Hour); h > 0 {
		parts = append(parts, plural(h, "hour"))
	}
	if m := int(d % time.Hour / time.Minute); m > 0 {
		parts = append(parts, plural(m, "minute"))
	}
	if s := int(d % time.Minute / time.Second); s > 0 {
		parts = append(parts, plural(s, "second"))
	}
	if len(parts) == 0 {
		return d.String()
	}
	return strings.Join(parts, " ")
}

// clockText is minutes after midnight on the 24-hour clock: "08:00".
func clockText(minute int) string { return fmt.Sprintf("%02d:%02d", minute/60, minute%60) }

// agendaWords is when an agenda comes: "every day at 08:00", "every
// weekday at 08:00".
func agendaWords(a personal.Agenda) string {
	if a.Weekdays {
		return "every weekday (Monday to Friday) at " + clockText(a.Minute)
	}
	return "every day at " + clockText(a.Minute)
}

// yourZone names the person's zone for a time of their day, as mrkdwn.
func yourZone(loc *time.Location, known bool) string {
	if !known {
		return "in your Slack time zone (bookbot could not read it just now); bookbot follows it if you change it"
	}
	return "in " + escape(loc.String()) + " — your Slack time zone; bookbot follows it if you change it"
}
