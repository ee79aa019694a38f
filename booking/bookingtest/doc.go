// Package bookingtest is an in-memory, faithful copy of the owner-authenticated
// booking API (v1): the fake behind the booking client's tests and the backend
// of `bookbot sandbox` and of the demo.
//
// A [Sandbox] is an [http.Handler] serving {base}/api/v1/... from memory:
// event types, slots computed from weekly hours in the owner's time zone
// (correct across DST), upcoming bookings, creation with the availability
// recheck, cancellation, and the rate limits. It answers as a running
// upstream service does, awkward corners included, because a client that
// only ever sees a polite fake breaks in production:
//
//   - slots are UTC without a fraction, bookings and receipts UTC with
//     milliseconds, so clients must compare instants; yet a create must copy
//     a slot's start and end exactly, as the same instant written otherwise
//     is refused;
//   - 400, 403, 409, 429 and 503 on create all say {"error":"not booked"}
//     and differ only in the statuses: 400 for input that is incomplete (a
//     required note or question unanswered included), 403 for an attendee
//     the owner's block list refuses, 503 once the calendar holds as many
//     confirmed bookings as it takes (not an outage), 409 with body status
//     409 for a slot that is taken, past or written otherwise, but 200 for a
//     repeat of an earlier booking (same event type, start and attendee
//     email, even one cancelled since) and for an event type that needs
//     email verification, whose link, mailed to the attendee, books the
//     time later ([Sandbox.ConfirmEmail]);
//   - input is barely checked: any email or time zone name passes, unknown
//     fields are ignored, a note is cut to 2000 characters or, when the event
//     type has no note question, dropped;
//   - a round robin booking goes to the free host with the fewest upcoming
//     bookings, maybe a teammate: the receipt is null and the booking is
//     invisible to the key; collective events book normally;
//   - 413 is plain text, its status line says "Payload Too Large", and it
//     comes before the key is checked; the fault hooks produce HTML 5xx
//     pages, dropped connections and writes that commit although the client
//     never hears about it;
//   - the Bearer scheme is taken in any case and spaces around the key are
//     dropped; another scheme is an "invalid token", no header a "missing
//     bearer token";
//   - any GET under /bookings/ answers as GET /bookings, event types are
//     listed by slug, every answer is dated by the sandbox's clock, and a
//     booking the attendee rescheduled is listed with event_type null.
//
// [Sandbox.EditAnswers] lets a test reshape successful answers into what the
// API text allows the real service to send and the sandbox does not.
//
// What the owner sets in the web application, and the API cannot change,
// is set on the Sandbox, so a test (or the demo's :fault) switches each
// edge on: [Sandbox.SetBlocked], [Sandbox.SetCeiling] and [Sandbox.Full],
// [Sandbox.ExhaustEventLimit] (other clients' attempts filling an event
// type's hour), and an [EventType]'s RequiresNote, RequiredQuestions,
// RequiresEmailVerification and Hosts.
//
// Under [NewServer] an unknown route fails the test, as it is a client bug.
//
// The request log ([Sandbox.Requests]) never holds the Authorization header or
// any key; a key found anywhere else in a request is redacted and flagged.
package bookingtest
