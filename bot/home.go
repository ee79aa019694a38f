package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
)

// homeDays is how many days of bookings App Home summarises.
const homeDays = 3

// publishHome shows the person's App Home: the next days' bookings for
// allowed people, nothing about bookings for anyone else.
func (b *Bot) publishHome(ctx context.Context, userID string) {
	var blocks []slack.Block
	if !b.cfg.Allowed(userID) {
		blocks = refusalMessage(userID, b.cfg.Contact).Blocks
	} else {
		list, err := b.booking.Bookings(ctx)
		if err != nil {
			// App Home says it in words (see homeBlocks); the detail is here.
			b.log.Warn(homeFailed, "user", userID, "err", err)
		}
		types, _ := b.types.recent()
		if types == nil {
			types, _ = b.types.get(ctx)
		}
		blocks = homeBlocks(b.cfg.Command, list, err, types, b.users.zone(ctx, userID), b.cfg.Now())
	}
	req := slack.PublishViewContextRequest{UserID: userID, View: slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}}}
	if _, err := b.slack.PublishViewContext(ctx, req); err != nil {
		b.log.Warn("views.publish failed", "user", userID, "err", err)
	}
}

// homeFailed is what App Home says when the bookings cannot be read.
const homeFailed = "The bookings could not be loaded"

// homeBlocks summarises the bookings of the next homeDays days in loc; err
// is said in words, as every message says it.
func homeBlocks(cmd string, list []booking.Booking, err error, types []booking.EventType, loc *time.Location, now time.Time) []slack.Block {
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain("Upcoming bookings")),
		slack.NewActionBlock("home_actions",
			button(actionNewBooking, "New booking", "").WithStyle(slack.StylePrimary),
			button(actionHomeRefresh, "Refresh", ""),
		),
	}
	if err != nil {
		return append(blocks, errorMessage(homeFailed, err).Blocks...)
	}
	today := now.In(loc)
	end := time.Date(today.Year(), today.Month(), today.Day()+homeDays, 0, 0, 0, 0, loc)
	days := map[string][]string{}
	var order []string
	count := 0
	for _, bk := range list {
		if !bk.Start.Before(end) {
			break
		}
		key := dayLabel(bk.Start, now, loc)
		if _, ok := days[key]; !ok {
			order = append(order, key)
		}
		days[key] = append(days[key], fmt.Sprintf("%s  %s · %s · %s", hours(bk.Start, bk.End, loc),
			orMissing(short(titleOf(bk.EventType, types))), orMissing(short(bk.BookerName.String)), code(bk.ID)))
		count++
	}
	blocks = append(blocks, contextLine(fmt.Sprintf("%d in the next %d days. Times in %s. `%s list` shows them all, to cancel or book again.", count, homeDays, zoneName(loc, now, end), escape(cmd))))
	if count == 0 {
		return append(blocks, section("Nothing booked in the next few days."))
	}
	for _, key := range order {
		for _, text := range splitLines("*"+key+"*", days[key], 3000) {
			if len(blocks) >= 99 {
				return append(blocks[:98], contextLine("More bookings than App Home can show: `"+escape(cmd)+" list` has them all."))
			}
			blocks = append(blocks, section(text))
		}
	}
	return blocks
}

// splitLines packs a heading and lines into texts of at most limit
// characters, never cutting a line (a single overlong line is clipped), so
// a busy day spreads over several sections instead of losing bookings.
func splitLines(heading string, lines []string, limit int) []string {
	var out []string
	cur := heading
	for _, l := range lines {
		if len(cur)+1+len(l) > limit && cur != "" {
			out = append(out, cur)
			cur = ""
		}
		if cur == "" {
			cur = clip(l, limit)
		} else {
			cur += "\n" + l
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}
