package state

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewPlanID hands out the id of a repair or restore plan: P-1, P-2, … across replicas.
func (s *Store) NewPlanID(ctx context.Context) (string, error) {
	n, err := s.rdb.Incr(ctx, s.key("seq", "plan")).Result()
	if err != nil {
		return "", wrap("new plan id", err)
	}
	return "P-" + strconv.FormatInt(n, 10), nil
}

// SavePlan stores a dry run's plan under its id until ttl passes.
func (s *Store) SavePlan(ctx context.Context, id string, plan []byte, ttl time.Duration) error {
	return wrap("save plan "+id, s.rdb.Set(ctx, s.key("plan", id), plan, ttl).Err())
}

// Plan returns the plan stored under id; ErrNotFound when there is none (never made, expired,
// or already carried out).
func (s *Store) Plan(ctx context.Context, id string) ([]byte, error) {
	b, err := s.rdb.Get(ctx, s.key("plan", id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, wrap("read plan "+id, err)
	}
	return b, nil
}

// DeletePlan removes a plan, so that it cannot be confirmed again.
func (s *Store) DeletePlan(ctx context.Context, id string) error {
	return wrap("delete plan "+id, s.rdb.Del(ctx, s.key("plan", id)).Err())
}

// Unlock releases the named lock if owner holds it; a lock that expired and was taken by
// someone else stays theirs.
func (s *Store) Unlock(ctx context.Context, name, owner string) error {
	return wrap("unlock "+name, s.run(ctx, unlockScript, []string{s.key("lock", name)}, owner).Err())
}

// RefreshLock extends the named lock to ttl from now if owner still holds it, and reports
// whether it does.
func (s *Store) RefreshLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	res, err := s.one(s.run(ctx, refreshScript, []string{s.key("lock", name)}, owner, ttl.Milliseconds()).Result())
	if err != nil {
		return false, wrap("refresh lock "+name, err)
	}
	return res.str(0, "held") == "1", nil
}

// LockHolder returns the owner of the named lock, "" when nobody holds it.
func (s *Store) LockHolder(ctx context.Context, name string) (string, error) {
	v, err := s.rdb.Get(ctx, s.key("lock", name)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", wrap("read lock "+name, err)
	}
	return v, nil
}

// AuditTrail returns up to n of the newest audit entries that match, oldest first. It reads
// the stream from the newest entry back, at most scan entries, so a rare match in a long
// stream costs a bounded read.
func (s *Store) AuditTrail(ctx context.Context, match func(AuditEntry) bool, n, scan int) ([]AuditEntry, error) {
	var found []AuditEntry
	end, read := "+", 0
	for len(found) < n && read < scan {
		page := int64(min(500, scan-read))
		msgs, err := s.rdb.XRevRangeN(ctx, s.key("audit"), end, "-", page).Result()
		if err != nil {
			return nil, wrap("read audit", err)
		}
		for _, m := range msgs {
			if e := parseAudit(m.Values); match(e) {
				found = append(found, e)
				if len(found) == n {
					break
				}
			}
		}
		read += len(msgs)
		if int64(len(msgs)) < page {
			break
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
	for i, j := 0, len(found)-1; i < j; i, j = i+1, j-1 {
		found[i], found[j] = found[j], found[i]
	}
	return found, nil
}
