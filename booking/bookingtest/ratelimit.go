package bookingtest

import (
	"net"
	"time"
)

// slidingWindow counts attempts per key over a sliding period. Upstream counts
// attempts, not successes, so callers record every attempt that gets through.
type slidingWindow map[string][]time.Time

// allow records an attempt for key at now, unless key already has limit
// attempts within the period before now; then it reports how long until the
// oldest of them leaves the window. A limit <= 0 always allows.
func (w *slidingWindow) allow(key string, limit int, period time.Duration, now time.Time) (ok bool, wait time.Duration) {
	if limit <= 0 {
		return true, 0
	}
	if *w == nil {
		*w = slidingWindow{}
	}
	hits := (*w)[key]
	keep := hits[:0]
	for _, h := range hits {
		if now.Sub(h) < period {
			keep = append(keep, h)
		}
	}
	if len(keep) >= limit {
		(*w)[key] = keep
		return false, keep[len(keep)-limit].Add(period).Sub(now)
	}
	(*w)[key] = append(keep, now)
	return true, 0
}

// clientIP is the host part of a RemoteAddr.
func clientIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}
