// Package notices watches the bookings list and posts notices of new,
// cancelled and moved bookings; the API has no webhooks.
package notices
