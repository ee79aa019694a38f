package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/internal/boltfile"
	"github.com/bookbot/bookbot/notices"
)

// Accounts is the account store in the file: people's own calendars, each
// key only as account.Sealer sealed it.
type Accounts struct{ file *boltfile.File }

// Accounts is the store's account.Store.
func (db *DB) Accounts() *Accounts { return &Accounts{file: db.file} }

var _ account.Store = (*Accounts)(nil)

// wireAccount is an account as the file keeps it; the user is its key.
type wireAccount struct {
	Sealed      []byte        `json:"sealed"` // base64 in the JSON
	ConnectedAt time.Time     `json:"connected_at"`
	LastUsed    time.Time     `json:"last_used,omitzero"`
	State       account.State `json:"state"`
	Notices     string        `json:"notices,omitempty"`
	Calendar    string        `json:"calendar,omitempty"`
	Page        string        `json:"page,omitempty"`
}

func putAccount(tx *bbolt.Tx, a account.Account) error {
	if a.User == "" {
		return errNoUser
	}
	v, err := json.Marshal(wireAccount{Sealed: a.Sealed, ConnectedAt: a.ConnectedAt, LastUsed: a.LastUsed, State: a.State, Notices: a.Notices, Calendar: a.Calendar, Page: a.Page})
	if err != nil {
		return err
	}
	return tx.Bucket(accounts).Put([]byte(a.User), v)
}

func readAccount(user string, v []byte) (account.Account, error) {
	var w wireAccount
	if err := json.Unmarshal(v, &w); err != nil {
		return account.Account{}, fmt.Errorf("account of %q: %w", user, err)
	}
	return account.Account{User: user, Sealed: w.Sealed, ConnectedAt: w.ConnectedAt, LastUsed: w.LastUsed, State: w.State, Notices: w.Notices, Calendar: w.Calendar, Page: w.Page}, nil
}

func (s *Accounts) Get(ctx context.Context, user string) (a account.Account, ok bool, err error) {
	err = s.file.View(ctx, func(tx *bbolt.Tx) error {
		if user == "" {
			return errNoUser
		}
		v := tx.Bucket(accounts).Get([]byte(user))
		if v == nil {
			return nil
		}
		a, err = readAccount(user, v)
		ok = err == nil
		return err
	})
	return a, ok, err
}

func (s *Accounts) Put(ctx context.Context, a account.Account) error {
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		if err := tx.Bucket(accountNotices).Delete([]byte(a.User)); err != nil {
			return err
		}
		return putAccount(tx, a)
	})
}

func (s *Accounts) SwapKeys(ctx context.Context, swaps []account.KeySwap) error {
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		for _, sw := range swaps {
			v := tx.Bucket(accounts).Get([]byte(sw.User))
			if v == nil {
				return account.ErrKeyChanged
			}
			a, err := readAccount(sw.User, v)
			if err != nil {
				return err
			}
			if !bytes.Equal(a.Sealed, sw.Old) {
				return account.ErrKeyChanged
			}
			a.Sealed = sw.New
			if sw.Calendar != "" {
				a.Calendar = sw.Calendar
			}
			if err := putAccount(tx, a); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Accounts) SetNotices(ctx context.Context, user, notices string) (ok bool, err error) {
	return s.change(ctx, user, func(a *account.Account) bool {
		a.Notices = notices
		return true
	})
}

// change applies fn to user's account, when there is one, and saves it
// when fn says it changed it; changed reports that it was saved.
func (s *Accounts) change(ctx context.Context, user string, fn func(*account.Account) bool) (changed bool, err error) {
	err = s.file.Update(ctx, func(tx *bbolt.Tx) error {
		v := tx.Bucket(accounts).Get([]byte(user))
		if v == nil {
			return nil
		}
		a, err := readAccount(user, v)
		if err != nil || !fn(&a) {
			return err
		}
		changed = true
		return putAccount(tx, a)
	})
	return changed && err == nil, err
}

func (s *Accounts) Delete(ctx context.Context, user string) (deleted bool, err error) {
	err = s.file.Update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(accounts)
		if user == "" || b.Get([]byte(user)) == nil {
			return nil
		}
		deleted = true
		if err := tx.Bucket(accountNotices).Delete([]byte(user)); err != nil {
			return err
		}
		return b.Delete([]byte(user))
	})
	return deleted && err == nil, err
}

func (s *Accounts) All(ctx context.Context) ([]account.Account, error) {
	var all []account.Account
	err := s.file.View(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(accounts).ForEach(func(k, v []byte) error {
			a, err := readAccount(string(k), v)
			all = append(all, a)
			return err
		})
	})
	return all, err
}

func (s *Accounts) Touch(ctx context.Context, user string, at time.Time) error {
	_, err := s.change(ctx, user, func(a *account.Account) bool {
		a.LastUsed = at
		return true
	})
	return err
}

// LastOf is the last read of calendar, for its person's live notices
// (notices.Snapshots); deleted with the account.
func (s *Accounts) LastOf(ctx context.Context, calendar string) (snap notices.Snapshot, ok bool, err error) {
	err = s.file.View(ctx, func(tx *bbolt.Tx) error {
		v := tx.Bucket(accountNotices).Get([]byte(calendar))
		if v == nil {
			return nil
		}
		var err error
		if snap, err = notices.DecodeSnapshot(v); err != nil {
			return fmt.Errorf("last read of %q: %w", calendar, err)
		}
		ok = true
		return nil
	})
	return snap, ok && err == nil, err
}

// SaveLastOf replaces the last read of calendar.
func (s *Accounts) SaveLastOf(ctx context.Context, calendar string, snap notices.Snapshot) error {
	v, err := notices.EncodeSnapshot(snap)
	if err != nil {
		return fmt.Errorf("bookbot store %s: last read of %q: %w", s.file.Path(), calendar, err)
	}
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		if calendar == "" {
			return errNoUser
		}
		return tx.Bucket(accountNotices).Put([]byte(calendar), v)
	})
}

func (s *Accounts) Refuse(ctx context.Context, user string, sealed []byte) (marked bool, err error) {
	return s.change(ctx, user, func(a *account.Account) bool {
		if a.State != account.OK || !bytes.Equal(a.Sealed, sealed) {
			return false
		}
		a.State, a.Sealed = account.Reconnect, []byte{}
		return true
	})
}
