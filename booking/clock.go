package booking

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// SkewTolerance is how far the booking API's clock may be from bookbot's
// before bookbot warns. The API lists a booking until it starts by its own
// clock, so beyond this a booking that started there may look cancelled here.
const SkewTolerance = 30 * time.Second

// apiClock is what the answers' Date headers told of the API's clock.
type apiClock struct {
	skew  atomic.Int64 // time.Duration
	known atomic.Bool  // set after skew, once
	over  atomic.Bool  // |skew| > SkewTolerance, as last warned about
}

// Skew is the booking API's clock minus bookbot's, as the Date header of the latest answer
// that carried one told it; ok is false until such an answer came.
func (c *Client) Skew() (d time.Duration, ok bool) {
	if !c.clock.known.Load() {
		return 0, false
	}
	return time.Duration(c.clock.skew.Load()), true
}

// apiNow is the time by the API's clock, as far as its answers told: the
// list shows only bookings that have not started by it.
func (c *Client) apiNow() time.Time {
	d, _ := c.Skew()
	return c.now().Add(d)
}

// measureClock reads the API's clock from an answer's Date header, sent and
// received being the client's clock when the request went and the answer
// came. A missing or unreadable Date says nothing and changes nothing.
func (c *Client) measureClock(ctx context.Context, date string, sent, received time.Time) {
	if date == "" {
		return
	}
	at, err := http.ParseTime(date)
	if err != nil {
		return
	}
	d := skew(at, sent, received)
	c.clock.skew.Store(int64(d))
	c.clock.known.Store(true)
	c.observer.ClockSkew(d)
	over := d.Abs() > SkewTolerance
	if c.clock.over.Swap(over) == over {
		return // warned already, or nothing to warn about
	}
	if over {
		c.log.LogAttrs(ctx, slog.LevelWarn, "the booking API's clock differs from this machine's; check NTP on this machine (timedatectl): bookbot judges whether a booking has started by the API's clock",
			slog.Duration("skew", d))
		return
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "the booking API's clock agrees with this machine's again", slog.Duration("skew", d))
}

// skew is the API's clock minus ours. The Date header, at, has one-second
// resolution (the API's time lies in [at, at+1 s)) and was written
// somewhere between sent and received, so the middle of each is compared;
// a difference within a second is the header's resolution, not a skew.
func skew(at, sent, received time.Time) time.Duration {
	d := at.Add(time.Second / 2).Sub(sent.Add(received.Sub(sent) / 2))
	if d.Abs() <= time.Second {
		return 0
	}
	return d
}
