package state

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// ProbeRecord is one stored probe result. Result is the full result as JSON, opaque here.
type ProbeRecord struct {
	At     time.Time       `json:"at"`
	Status string          `json:"status"`
	Class  string          `json:"class,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// probeHistory bounds the stored results per pipeline.
const probeHistory = 100

// RecordProbe stores a probe result of pipeline and returns the status before it ("" for the
// first). Transitions are decided on it, so they survive restarts and work across replicas.
func (s *Store) RecordProbe(ctx context.Context, pipeline string, r ProbeRecord) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	res, err := s.one(s.run(ctx, recordProbeScript, []string{s.base}, pipeline, r.Status, b, probeHistory, ms(r.At)).Result())
	prev := res.str(0, "previous")
	if err != nil {
		return "", wrap("record probe", err)
	}
	return prev, nil
}

// ProbeHistory returns the newest n results of pipeline, newest first.
func (s *Store) ProbeHistory(ctx context.Context, pipeline string, n int64) ([]ProbeRecord, error) {
	vals, err := s.rdb.LRange(ctx, s.key("probe", pipeline, "history"), 0, n-1).Result()
	if err != nil {
		return nil, wrap("read probe history", err)
	}
	out := make([]ProbeRecord, 0, len(vals))
	for _, v := range vals {
		var r ProbeRecord
		if json.Unmarshal([]byte(v), &r) == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// ProbeStatus is a pipeline's current probe status and since when it holds.
type ProbeStatus struct {
	Status string
	Since  time.Time
	Last   ProbeRecord
}

// LastProbe returns the pipeline's newest probe status; Status "" when never probed.
func (s *Store) LastProbe(ctx context.Context, pipeline string) (ProbeStatus, error) {
	v, err := s.rdb.HMGet(ctx, s.key("probe", pipeline), "status", "since", "last").Result()
	if err != nil {
		return ProbeStatus{}, wrap("read probe status", err)
	}
	var ps ProbeStatus
	ps.Status = str(v[0])
	since, _ := strconv.ParseInt(str(v[1]), 10, 64)
	ps.Since = fromMS(since)
	_ = json.Unmarshal([]byte(str(v[2])), &ps.Last)
	return ps, nil
}
