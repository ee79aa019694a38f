package bot

import "context"

// calendarFor is the calendar user's commands act on.
func (b *Bot) calendarFor(ctx context.Context, user string) (Booker, error) {
	return b.booking, nil
}
