package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/personal"
)

// Personal is the personal store in the database.
func (db *DB) Personal() personal.Store {
	return personalStore{Claims: personal.Claims{Box: db.Outbox()}, pool: db.pool}
}

// personalStore keeps the settings in a table of their own, the claims in
// the outbox.
type personalStore struct {
	personal.Claims
	pool *pgxpool.Pool
}

func personalErr(what string, err error) error {
	return fmt.Errorf("personal store (postgres): %s: %w", what, err)
}

// An empty user ID is refused, as the embedded store refuses it: a caller
// gets the same answers from either.
var errNoUser = errors.New("no user ID")

const settingsColumns = "remind_ns, agenda_minute, agenda_weekdays, updated_s, updated_ns"

// scanSettings reads settingsColumns, after extra, into a Settings of the
// caller's own.
func scanSettings(row pgx.Row, extra ...any) (personal.Settings, error) {
	var (
		remind   int64
		minute   *int32
		weekdays bool
		upS      int64
		upNS     int32
	)
	if err := row.Scan(append(extra, &remind, &minute, &weekdays, &upS, &upNS)...); err != nil {
		return personal.Settings{}, err
	}
	s := personal.Settings{Remind: time.Duration(remind), Updated: fromUnix(upS, upNS)}
	if minute != nil {
		s.Agenda = &personal.Agenda{Minute: int(*minute), Weekdays: weekdays}
	}
	return s, nil
}

func (s personalStore) Settings(ctx context.Context, user string) (personal.Settings, bool, error) {
	if user == "" {
		return personal.Settings{}, false, personalErr("settings", errNoUser)
	}
	set, err := scanSettings(s.pool.QueryRow(ctx,
		"SELECT "+settingsColumns+" FROM bookbot_personal_settings WHERE user_id = $1", []byte(user)))
	if errors.Is(err, pgx.ErrNoRows) {
		return personal.Settings{}, false, nil
	}
	if err != nil {
		return personal.Settings{}, false, personalErr(fmt.Sprintf("settings of %q", user), err)
	}
	return set, true, nil
}

// SaveSettings replaces the user's settings; the zero value (everything
// off) is saved too. It notifies PersonalChannel as it commits, so the
// replica that runs reminders looks at once, whichever replica saved.
func (s personalStore) SaveSettings(ctx context.Context, user string, set personal.Settings) error {
	if user == "" {
		return personalErr("save settings", errNoUser)
	}
	var minute *int32
	weekdays := false
	if set.Agenda != nil {
		m := int32(set.Agenda.Minute)
		minute, weekdays = &m, set.Agenda.Weekdays
	}
	upS, upNS := unix(set.Updated)
	_, err := s.pool.Exec(ctx, `INSERT INTO bookbot_personal_settings (user_id, `+settingsColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (user_id) DO UPDATE SET remind_ns = excluded.remind_ns, agenda_minute = excluded.agenda_minute,
			agenda_weekdays = excluded.agenda_weekdays, updated_s = excluded.updated_s, updated_ns = excluded.updated_ns
		RETURNING pg_notify($7, '')`,
		[]byte(user), int64(set.Remind), minute, weekdays, upS, upNS, PersonalChannel)
	if err != nil {
		return personalErr(fmt.Sprintf("save settings of %q", user), err)
	}
	return nil
}

// AllSettings returns everyone's saved settings in a map of the caller's
// own: never nil.
func (s personalStore) AllSettings(ctx context.Context) (map[string]personal.Settings, error) {
	rows, err := s.pool.Query(ctx, "SELECT user_id, "+settingsColumns+" FROM bookbot_personal_settings")
	if err != nil {
		return nil, personalErr("all settings", err)
	}
	defer rows.Close()
	all := map[string]personal.Settings{}
	for rows.Next() {
		var user []byte
		set, err := scanSettings(rows, &user)
		if err != nil {
			return nil, personalErr("all settings", err)
		}
		all[string(user)] = set
	}
	if err := rows.Err(); err != nil {
		return nil, personalErr("all settings", err)
	}
	return all, nil
}
