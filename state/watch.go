package state

import (
	"context"
	"encoding/json"
	"time"
)

// Watch is a recovery watch on a pipeline: after a fix, streamwatch polls its progress and
// reports into the incident's thread when progress resumes or the time runs out. Watches
// live in Redis, so they survive restarts.
type Watch struct {
	Pipeline string          `json:"pipeline"`
	Incident string          `json:"incident,omitempty"`
	Channel  string          `json:"channel"`
	By       string          `json:"by"`
	Started  time.Time       `json:"started"`
	Until    time.Time       `json:"until"`
	Baseline json.RawMessage `json:"baseline"`
}

// StartWatch stores w, replacing a watch on the same pipeline.
func (s *Store) StartWatch(ctx context.Context, w Watch) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	return wrap("start watch", s.rdb.HSet(ctx, s.key("watches"), w.Pipeline, b).Err())
}

// Watches lists the active watches.
func (s *Store) Watches(ctx context.Context) ([]Watch, error) {
	m, err := s.rdb.HGetAll(ctx, s.key("watches")).Result()
	if err != nil {
		return nil, wrap("list watches", err)
	}
	var out []Watch
	for _, v := range m {
		var w Watch
		if json.Unmarshal([]byte(v), &w) == nil {
			out = append(out, w)
		}
	}
	return out, nil
}

// EndWatch removes the pipeline's watch; only the caller that gets true reports its end, so
// a watch ends once even when replicas race.
func (s *Store) EndWatch(ctx context.Context, pipeline string) (bool, error) {
	n, err := s.rdb.HDel(ctx, s.key("watches"), pipeline).Result()
	return n == 1, wrap("end watch", err)
}
