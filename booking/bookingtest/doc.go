// Package bookingtest is an in-memory, faithful copy of the owner-authenticated
// booking API (v1): the fake behind the booking client's tests and the backend
// of `bookbot sandbox` and of the demo.
//
// A [Sandbox] is an [http.Handler] serving {base}/api/v1/... from memory:
// event types, slots computed from weekly hours in the owner's time zone
// (correct across DST), upcoming bookings, creation with the availability
// recheck, cancellation, and the rate limits. It copies the API's awkward
// corners on purpose, because a client that only ever sees a polite fake
// breaks in production:
//
//   - slots are UTC without a fraction, bookings and receipts UTC with
//     milliseconds, so clients must compare instants; yet a create must copy
//     a slot's start and end exactly, as the same instant written otherwise
//     is refused;
//   - a taken slot answers 409 with a body status of 200;
//   - team events (round_robin, collective) answer 201 with a null booking;
//   - 413 is plain text, and the fault hooks produce HTML 5xx pages,
//     dropped connections and writes that commit although the client never
//     hears about it.
//
// Where the API text is vague the sandbox is strict, so client mistakes show
// up in tests: undocumented form fields are rejected, and under [NewServer]
// an unknown route fails the test.
//
// The request log ([Sandbox.Requests]) never holds the Authorization header or
// any key; a key found anywhere else in a request is redacted and flagged.
package bookingtest
