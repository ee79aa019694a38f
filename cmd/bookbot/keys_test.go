package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/store/bolt"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store/pg/pgtest"
)

// `bookbot keys rotate` re-encrypts every stored key under the new secret
// key, in the embedded store and in PostgreSQL; with the wrong old secret
// it changes nothing.
func TestKeysRotate(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"embedded", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			dir := t.TempDir()
			var e []string
			var open func() (account.Store, func())
			if backend == "embedded" {
				e = []string{"BOOKBOT_STATE_DIR=" + dir}
				open = func() (account.Store, func()) {
					db, err := bolt.Open(dir, bolt.Options{})
					if err != nil {
						t.Fatal(err)
					}
					return db.Accounts(), func() { _ = db.Close() }
				}
			} else {
				url := pgtest.URL(t)
				e = []string{"BOOKBOT_DATABASE_URL=" + url}
				open = func() (account.Store, func()) {
					db, err := pg.Open(ctx, url)
					if err != nil {
						t.Fatal(err)
					}
					if _, _, err := db.Migrate(ctx); err != nil {
						t.Fatal(err)
					}
					return db.Accounts(), db.Close
				}
			}
			oldSecret, newSecret, otherSecret := newSecretKey(t), newSecretKey(t), newSecretKey(t)
			file := func(name, s string) string {
				p := filepath.Join(t.TempDir(), name)
				if err := os.WriteFile(p, []byte(s+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				return p
			}
			oldFile, newFile, otherFile := file("old", oldSecret), file("new", newSecret), file("other", otherSecret)
			sealer := func(s string) *account.Sealer {
				b, _ := account.ParseSecret(s)
				sl, _ := account.NewSealer(b)
				return sl
			}
			keys := map[string]string{"UADA": "cal_ada_key_0123456789", "UBOB": "cal_bob_key_9876543210"}
			st, done := open()
			for user, plain := range keys {
				k, _ := booking.NewKey(plain)
				sealed, err := sealer(oldSecret).Seal(user, k)
				if err != nil {
					t.Fatal(err)
				}
				if err := st.Put(ctx, account.Account{User: user, Sealed: sealed, ConnectedAt: time.Now(), State: account.OK}); err != nil {
					t.Fatal(err)
				}
			}
			// A refused key, deleted: nothing to seal, and kept as it is.
			if err := st.Put(ctx, account.Account{User: "UCAT", Sealed: []byte{}, ConnectedAt: time.Now(), State: account.Reconnect}); err != nil {
				t.Fatal(err)
			}
			done()

			rotate := func(from string) (string, error) {
				cmd := exec.CommandContext(ctx, binary, "keys", "rotate", "-old", from, "-new", newFile)
				cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, e...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				return out.String(), err
			}
			check := func(s *account.Sealer, want bool) {
				t.Helper()
				st, done := open()
				defer done()
				for user, plain := range keys {
					a, ok, err := st.Get(ctx, user)
					if !ok || err != nil {
						t.Fatalf("%s: %v, %v", user, ok, err)
					}
					k, err := s.Open(user, a.Sealed)
					if opened := err == nil && string(k.Plain()) == plain; opened != want {
						t.Errorf("%s: the key opens: %v, want %v (%v)", user, opened, want, err)
					}
				}
			}

			out, err := rotate(otherFile)
			if err == nil || !strings.Contains(out, "nothing was changed") {
				t.Fatalf("rotate with the wrong old secret: %v\n%s", err, out)
			}
			check(sealer(oldSecret), true)

			if backend == "postgres" {
				// A replica leads: bookbot is running, and the rotation
				// refuses to race it.
				db, err := pg.Open(ctx, e[0][len("BOOKBOT_DATABASE_URL="):])
				if err != nil {
					t.Fatal(err)
				}
				lctx, stop := context.WithCancel(ctx)
				ran := make(chan error, 1)
				go func() {
					ran <- db.Leader("bookbot", pg.LeaderOptions{Replica: "replica-1"}).Run(lctx, func(ctx context.Context, _ pg.Term) { <-ctx.Done() })
				}()
				testutil.Until(ctx, t, "a replica leads", func() bool {
					who, err := db.WhoLeads(ctx, "bookbot")
					return err == nil && who.Leading
				})
				out, err := rotate(oldFile)
				if err == nil || !strings.Contains(out, "bookbot is running") || !strings.Contains(out, "nothing was changed") {
					t.Errorf("rotate while a replica leads: %v\n%s", err, out)
				}
				stop()
				<-ran
				db.Close()
				check(sealer(oldSecret), true)
			}

			out, err = rotate(oldFile)
			if err != nil || !strings.Contains(out, "Re-encrypted 2 stored keys") {
				t.Fatalf("rotate: %v\n%s", err, out)
			}
			check(sealer(newSecret), true)
			check(sealer(oldSecret), false)
			for _, s := range []string{oldSecret, newSecret, otherSecret, keys["UADA"], keys["UBOB"]} {
				if strings.Contains(out, s) {
					t.Error("a secret is in the output")
				}
			}
		})
	}
}
