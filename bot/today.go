package bot

import (
	"context"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/personal"
)

// todayFlow is `today`: the person's day, as their agenda shows it.
func todayFlow() flow {
	return flow{commands: []command{
		{name: "today", help: "today's bookings, in your time zone", run: func(b *Bot, later *jobs, c call) any {
			later.add("today", func(ctx context.Context) { c.reply(b.todayReply(ctx, c.UserID)) })
			return nil
		}},
	}}
}

// todayReply lists today's bookings in the person's zone.
func (b *Bot) todayReply(ctx context.Context, user string) message {
	cal, list, err := b.upcoming(ctx, user)
	if err != nil {
		return b.failed("Today's bookings could not be loaded", err, upcomingButton())
	}
	return todayMessage(list, b.titles(ctx, cal), b.users.zone(ctx, user), b.cfg.Now())
}

// todayMessage is today's bookings in loc, as an agenda has them.
func todayMessage(list []booking.Booking, types []booking.EventType, loc *time.Location, now time.Time) message {
	d := personal.DateOf(now, loc)
	day, full := personal.DayBookings(list, d, loc)
	heading := dayHeading("Today", now, loc)
	text := "No bookings today."
	if len(day) > 0 {
		text = heading + ": " + plural(len(day), "booking")
	}
	return message{Text: text, Blocks: dayBlocks(heading, d, day, types, loc, "No bookings today.", "", full)}
}
