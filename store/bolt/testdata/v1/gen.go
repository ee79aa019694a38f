//go:build ignore

// gen writes bookbot.db as the store wrote it before the outbox (format
// version 1: the digest ledger, notices claims and personal claims each in
// a bucket of its own), for the test of its carry-over. It imports the
// release fixture (../release/state) with that version's Open, then adds a
// date claimed by a process that died. It was run once, at the commit
// that added it:
//
//	go run ./store/bolt/testdata/v1/gen.go store/bolt/testdata/v1
//
// The code it calls has changed since; it stays to say how the file was
// made. import_test.go expects what it wrote.
package main

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/store/bolt"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: gen DIR")
	}
	out := os.Args[1]
	tmp, err := os.MkdirTemp("", "bookbot-v1")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "state")
	if err := os.CopyFS(dir, os.DirFS("store/bolt/testdata/release/state")); err != nil {
		log.Fatal(err)
	}
	db, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC)
	l := db.Ledger(digest.LedgerOptions{Now: func() time.Time { return now }})
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		log.Fatal(err)
	}
	if ok, err := l.ClaimNotice(context.Background(), time.Date(2026, 11, 27, 0, 0, 0, 0, berlin)); err != nil || !ok {
		log.Fatal(ok, err)
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, bolt.FileName))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, bolt.FileName), b, 0o644); err != nil {
		log.Fatal(err)
	}
}
