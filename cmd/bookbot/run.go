package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// errUsage means the usage text has been printed already.
var errUsage = errors.New("usage")

const usage = `bookbot puts your booking API into Slack.

Usage:
  bookbot [run]                      serve Slack over Socket Mode (configured from the environment)
  bookbot demo [-script FILE] [-faults] [-tz ZONE]
                                     try everything locally, with no credentials
  bookbot sandbox [-addr HOST:PORT]  serve the sandbox booking API
  bookbot digest [-dry-run] [-date YYYY-MM-DD]
                                     build and post the next-day digest once
  bookbot check                      verify the configuration against the real services
  bookbot audit [-since 24h] [-json] print the journal of bookings and cancellations
  bookbot migrate [-status]          bring the PostgreSQL schema (BOOKBOT_DATABASE_URL) up to date
  bookbot keys rotate -old FILE -new FILE
                                     re-encrypt people's stored API keys under a new BOOKBOT_SECRET_KEY
  bookbot version                    print the version
`

// run is the whole program; main only supplies the process's context,
// arguments, environment and output.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd, rest := "run", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, rest = args[0], args[1:]
	}
	switch cmd {
	case "version":
		fmt.Fprintln(stdout, versionString())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "sandbox":
		return runSandbox(ctx, rest, stdout, stderr)
	case "run":
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "bookbot: run takes no arguments\n\n%s", usage)
			return errUsage
		}
		return serve(ctx, getenv, stderr)
	case "digest":
		return runDigest(ctx, rest, getenv, stdout, stderr)
	case "demo":
		return runDemo(ctx, rest, stdout, stderr)
	case "audit":
		return runAudit(ctx, rest, getenv, stdout, stderr)
	case "check":
		return runCheck(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout, stderr)
	case "keys":
		return runKeys(ctx, rest, getenv, stdout, stderr)
	}
	fmt.Fprintf(stderr, "bookbot: unknown command %q\n\n%s", cmd, usage)
	return errUsage
}

func exitCode(err error) int {
	if errors.Is(err, errUsage) || errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

func versionString() string {
	v := "bookbot " + version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v += " (" + info.GoVersion
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += ", " + s.Value[:12]
		}
	}
	return v + ")"
}
