package bookingtest

import (
	"net"
	"time"
)

// slidingWindow counts attempts per key over a sliding period. Upstream counts
// attempts, not successes, so callers record every attempt that gets through.
type slidingWindow map[string][]time.Time

// allow records an attempt for key at now, unless key already has limit
// attempts within the period before now. A limit <= 0 always allows.
func (w *slidingWindow) allow(key string, limit int, period time.Duration, now time.Time) bool {
	if limit <= 0 {
		return true
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
		return false
	}
	(*w)[key] = append(keep, now)
	return true
}

// clientIP is the host part of a RemoteAddr.
func clientIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}
