package state

import (
	"context"
	"time"
)

// Waiting is an incident waiting for its automatic diagnosis, and its pipeline.
type Waiting struct {
	Incident string
	Pipeline string
}

// ClaimDiagnoses hands out up to n incidents whose automatic diagnosis is due: every incident
// the record script opens for a pipeline waits in the queue from its opening. A claim holds
// the incident for lease; DoneDiagnosis takes it out of the queue, and an incident whose
// claimant died is handed out again when the lease ends (the note's once flag keeps a second
// verdict out of its thread).
func (s *Store) ClaimDiagnoses(ctx context.Context, n int, lease time.Duration) ([]Waiting, error) {
	if n <= 0 {
		return nil, nil
	}
	res, err := s.one(s.run(ctx, claimDiagnoses, []string{s.base}, ms(s.now()), lease.Milliseconds(), n).Result())
	if err != nil {
		return nil, wrap("claim diagnoses", err)
	}
	out := make([]Waiting, res.len())
	for i := range out {
		out[i] = Waiting{Incident: res.str(i, "incident"), Pipeline: res.str(i, "pipeline")}
	}
	return out, nil
}

// DoneDiagnosis takes an incident out of the diagnosis queue.
func (s *Store) DoneDiagnosis(ctx context.Context, id string) error {
	return wrap("diagnosis of "+id+" done", s.rdb.ZRem(ctx, s.key("diagnose"), NormalizeID(id)).Err())
}
