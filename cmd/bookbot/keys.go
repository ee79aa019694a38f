package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/store"
)

// runKeys is `bookbot keys rotate -old FILE -new FILE`: every stored key
// opened with the old secret key and sealed again with the new one, all
// or none, in the embedded store or in PostgreSQL. bookbot (every replica)
// is stopped first: the embedded store's lock says so; over PostgreSQL a
// replica that leads refuses the rotation, and any key connected,
// refused or deleted meanwhile makes it change nothing. bookbot is then
// started with the new secret key.
func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintf(stderr, "bookbot: keys: say `bookbot keys rotate -old FILE -new FILE`\n\n%s", usage)
		return errUsage
	}
	fs := flag.NewFlagSet("keys rotate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	oldFile := fs.String("old", "", "a file holding the secret key the keys are sealed with now")
	newFile := fs.String("new", "", "a file holding the secret key to seal them with")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *oldFile == "" || *newFile == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "bookbot: keys rotate needs -old FILE and -new FILE, and nothing else")
		return errUsage
	}
	from, err := sealerFrom(*oldFile)
	if err != nil {
		return fmt.Errorf("keys rotate: -old: %w", err)
	}
	to, err := sealerFrom(*newFile)
	if err != nil {
		return fmt.Errorf("keys rotate: -new: %w", err)
	}
	cfg, err := config.Load(getenv, 0)
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg, stderr)
	cfg.LogWarnings(log)
	accounts, running, closeStore, err := openAccounts(ctx, cfg)
	if err != nil {
		return fmt.Errorf("keys rotate: %w", err)
	}
	defer closeStore()
	if err := running(ctx); err != nil {
		return fmt.Errorf("keys rotate: nothing was changed: %w", err)
	}
	all, err := accounts.All(ctx)
	if err != nil {
		return fmt.Errorf("keys rotate: %w", err)
	}
	var sealed []account.Account
	for _, a := range all {
		if len(a.Sealed) > 0 { // a refused key was deleted: nothing to seal
			sealed = append(sealed, a)
		}
	}
	resealed, err := account.Reseal(sealed, from, to)
	if err != nil {
		return fmt.Errorf("keys rotate: nothing was changed: %w", err)
	}
	if err := accounts.SwapKeys(ctx, resealed); err != nil {
		return fmt.Errorf("keys rotate: nothing was changed: %w; stop bookbot (every replica) and run it again", err)
	}
	fmt.Fprintf(stdout, "Re-encrypted %d stored keys. Now set BOOKBOT_SECRET_KEY (or BOOKBOT_SECRET_KEY_FILE) to the new secret key and start bookbot.\n", len(resealed))
	return nil
}

// sealerFrom reads a secret key file (BOOKBOT_SECRET_KEY's form).
func sealerFrom(path string) (*account.Sealer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4<<10))
	if err != nil {
		return nil, err
	}
	secret, err := account.ParseSecret(string(b))
	clear(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return account.NewSealer(secret)
}

// openAccounts opens the account store BOOKBOT_DATABASE_URL or
// BOOKBOT_STATE_DIR names, the embedded one holding the state directory
// (so no bookbot runs on it); running says whether a bookbot replica
// runs on the database (one leads).
func openAccounts(ctx context.Context, cfg *config.Config) (s account.Store, running func(context.Context) error, closeStore func(), err error) {
	o := stateOf(cfg, store.Hold)
	o.Migrate = true
	octx, cancel := context.WithTimeout(ctx, migrateTimeout)
	defer cancel()
	st, err := store.Open(octx, o)
	if err != nil {
		return nil, nil, nil, err
	}
	running = func(ctx context.Context) error {
		if st.Database == nil {
			return nil // the embedded store's directory is held: no bookbot runs on it
		}
		who, err := st.Database.WhoLeads(ctx, "bookbot")
		switch {
		case err != nil:
			return fmt.Errorf("database (BOOKBOT_DATABASE_URL): %w", err)
		case who.Leading:
			return fmt.Errorf("bookbot is running on this database (replica %s leads): stop bookbot, every replica, first", who.Replica)
		}
		return nil
	}
	return st.Accounts, running, st.Close, nil
}
