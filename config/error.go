package config

import (
	"fmt"
	"strings"
)

// Error is every problem Load found in the configuration, in the order of
// the variables in Vars. Match it with errors.As.
type Error struct {
	Problems []Problem
}

// Problem is one thing wrong with the configuration. Msg is a sentence that
// starts with the name of the variable (Var) and never holds a secret.
type Problem struct {
	Var string
	Msg string
}

// Error prints one problem a line:
//
//	configuration: 2 problems:
//	  - BOOKING_BASE_URL is required: …
//	  - DIGEST_TIMEZONE: "Mars/Base" is not an IANA time zone name …
func (e *Error) Error() string {
	var b strings.Builder
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	fmt.Fprintf(&b, "configuration: %d %s:", len(e.Problems), noun)
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p.Msg)
	}
	return b.String()
}
