// Package oracle is bookbot's truth oracle, a test and nothing else: a
// seeded, reproducible run of the real bot (the wiring of
// cmd/internal/app, the embedded store, Socket Mode to the Slack stand-in)
// against the sandbox booking API, through creates, cancels, attendees'
// bookings, moves and cancels, the owner's settings and the service's
// faults, restarts and writes cut off by a stop. Every outcome a person is
// told, and every notice, is read as a claim and held against what the
// sandbox committed and answered. A disagreement fails the test with its
// seed, the steps that led to it and the command that runs them again.
//
// `go test` runs a few hundred steps; docs/sandbox.md says how to run it
// long.
package oracle
