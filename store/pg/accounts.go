package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/notices"
)

// Accounts is the account store in the database, which replicas share:
// people's own calendars, each key only as account.Sealer sealed it.
func (db *DB) Accounts() account.Store { return accountStore{db.pool} }

type accountStore struct{ pool *pgxpool.Pool }

func accountErr(what string, err error) error {
	return fmt.Errorf("account store (postgres): %s: %w", what, err)
}

const accountColumns = "user_id, sealed, connected_s, connected_ns, last_used_s, last_used_ns, state, notices, calendar, page"

func scanAccount(row pgx.Row) (account.Account, error) {
	var (
		user, sealed []byte
		cs           int64
		cns          int32
		us           *int64
		uns          *int32
		state        string
		a            account.Account
	)
	if err := row.Scan(&user, &sealed, &cs, &cns, &us, &uns, &state, &a.Notices, &a.Calendar, &a.Page); err != nil {
		return account.Account{}, err
	}
	a.User, a.Sealed, a.ConnectedAt, a.State = string(user), sealed, fromUnix(cs, cns), account.State(state)
	if us != nil && uns != nil {
		a.LastUsed = fromUnix(*us, *uns)
	}
	return a, nil
}

func (s accountStore) Get(ctx context.Context, user string) (account.Account, bool, error) {
	if user == "" {
		return account.Account{}, false, accountErr("get", errNoUser)
	}
	a, err := scanAccount(s.pool.QueryRow(ctx, "SELECT "+accountColumns+" FROM bookbot_accounts WHERE user_id = $1", []byte(user)))
	if errors.Is(err, pgx.ErrNoRows) {
		return account.Account{}, false, nil
	}
	if err != nil {
		return account.Account{}, false, accountErr("get", err)
	}
	return a, true, nil
}

func putAccount(ctx context.Context, tx pgx.Tx, a account.Account) error {
	if a.User == "" {
		return errNoUser
	}
	cs, cns := unix(a.ConnectedAt)
	var us *int64
	var uns *int32
	if !a.LastUsed.IsZero() {
		s, ns := unix(a.LastUsed)
		us, uns = &s, &ns
	}
	_, err := tx.Exec(ctx, `INSERT INTO bookbot_accounts (`+accountColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (user_id) DO UPDATE SET sealed = $2, connected_s = $3, connected_ns = $4,
			last_used_s = $5, last_used_ns = $6, state = $7, notices = $8, calendar = $9, page = $10`,
		[]byte(a.User), a.Sealed, cs, cns, us, uns, string(a.State), a.Notices, a.Calendar, a.Page)
	return err
}

func (s accountStore) Put(ctx context.Context, a account.Account) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM bookbot_account_notices WHERE user_id = $1", []byte(a.User)); err != nil {
			return err
		}
		return putAccount(ctx, tx, a)
	})
	if err != nil {
		return accountErr("put", err)
	}
	return nil
}

// SwapKeys compares and swaps each row in one transaction, rolled back
// unless every row still held its old key: a key deleted or connected
// again meanwhile is never overwritten.
func (s accountStore) SwapKeys(ctx context.Context, swaps []account.KeySwap) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, sw := range swaps {
			tag, err := tx.Exec(ctx, "UPDATE bookbot_accounts SET sealed = $3, calendar = COALESCE(NULLIF($4, ''), calendar) WHERE user_id = $1 AND sealed = $2", []byte(sw.User), sw.Old, sw.New, sw.Calendar)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				return account.ErrKeyChanged
			}
		}
		return nil
	})
	if errors.Is(err, account.ErrKeyChanged) {
		return err
	}
	if err != nil {
		return accountErr("swap keys", err)
	}
	return nil
}

func (s accountStore) SetNotices(ctx context.Context, user, notices string) (bool, error) {
	tag, err := s.pool.Exec(ctx, "UPDATE bookbot_accounts SET notices = $2 WHERE user_id = $1", []byte(user), notices)
	if err != nil {
		return false, accountErr("set notices", err)
	}
	return tag.RowsAffected() > 0, nil
}

func (s accountStore) Delete(ctx context.Context, user string) (bool, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM bookbot_accounts WHERE user_id = $1", []byte(user))
	if err != nil {
		return false, accountErr("delete", err)
	}
	return tag.RowsAffected() > 0, nil
}

func (s accountStore) All(ctx context.Context) ([]account.Account, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+accountColumns+" FROM bookbot_accounts ORDER BY user_id")
	if err != nil {
		return nil, accountErr("all", err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (account.Account, error) { return scanAccount(r) })
	if err != nil {
		return nil, accountErr("all", err)
	}
	return all, nil
}

func (s accountStore) Refuse(ctx context.Context, user string, sealed []byte) (bool, error) {
	tag, err := s.pool.Exec(ctx, "UPDATE bookbot_accounts SET state = $3, sealed = '' WHERE user_id = $1 AND sealed = $2 AND state = $4",
		[]byte(user), sealed, string(account.Reconnect), string(account.OK))
	if err != nil {
		return false, accountErr("refuse", err)
	}
	return tag.RowsAffected() > 0, nil
}

func (s accountStore) Touch(ctx context.Context, user string, at time.Time) error {
	us, uns := unix(at)
	if _, err := s.pool.Exec(ctx, "UPDATE bookbot_accounts SET last_used_s = $2, last_used_ns = $3 WHERE user_id = $1", []byte(user), us, uns); err != nil {
		return accountErr("touch", err)
	}
	return nil
}

// AccountNotices keeps the last read of each connected person's calendar,
// for their live notices; deleted with the account.
func (db *DB) AccountNotices() notices.Snapshots { return accountStore{db.pool} }

func (s accountStore) LastOf(ctx context.Context, calendar string) (notices.Snapshot, bool, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, "SELECT snapshot FROM bookbot_account_notices WHERE user_id = $1", []byte(calendar)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return notices.Snapshot{}, false, nil
	}
	if err != nil {
		return notices.Snapshot{}, false, accountErr("last read of "+calendar, err)
	}
	snap, err := notices.DecodeSnapshot(v)
	if err != nil {
		return notices.Snapshot{}, false, accountErr("last read of "+calendar, err)
	}
	return snap, true, nil
}

func (s accountStore) SaveLastOf(ctx context.Context, calendar string, snap notices.Snapshot) error {
	v, err := notices.EncodeSnapshot(snap)
	if err != nil {
		return accountErr("last read of "+calendar, err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO bookbot_account_notices (user_id, snapshot) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET snapshot = excluded.snapshot`, []byte(calendar), v); err != nil {
		return accountErr("save the last read of "+calendar, err)
	}
	return nil
}
