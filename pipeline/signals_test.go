package pipeline_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/pipeline"
)

// holds is an observation in which the given signals hold and the others are clear; unknown
// ones are left out (not judged this round).
func holds(at time.Time, hold []pipeline.Signal, unknown ...pipeline.Signal) pipeline.Observation {
	obs := pipeline.Observation{At: at, Holds: map[pipeline.Signal]bool{}}
	for _, s := range pipeline.Signals {
		obs.Holds[s] = false
	}
	for _, s := range hold {
		obs.Holds[s] = true
	}
	for _, s := range unknown {
		delete(obs.Holds, s)
	}
	return obs
}

// TestStepHysteresis: a signal opens after two rounds in a row, recovers after two clear
// rounds in a row; a single round either way changes nothing, and a round that could not
// judge counts for neither.
func TestStepHysteresis(t *testing.T) {
	stale, lag := []pipeline.Signal{pipeline.SignalStale}, []pipeline.Signal{pipeline.SignalStale, pipeline.SignalLag}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	type round struct {
		obs    pipeline.Observation
		change pipeline.Change
		fresh  []pipeline.Signal
		active []pipeline.Signal
	}
	tests := []struct {
		name   string
		rounds []round
	}{
		{"two rounds open, two clear recover", []round{
			{holds(at, stale), pipeline.Unchanged, nil, nil},
			{holds(at, stale), pipeline.Began, stale, stale},
			{holds(at, stale), pipeline.Persists, nil, stale},
			{holds(at, nil), pipeline.Persists, nil, stale},
			{holds(at, nil), pipeline.Recovered, nil, nil},
			{holds(at, nil), pipeline.Unchanged, nil, nil},
		}},
		{"a flicker opens nothing", []round{
			{holds(at, stale), pipeline.Unchanged, nil, nil},
			{holds(at, nil), pipeline.Unchanged, nil, nil},
			{holds(at, stale), pipeline.Unchanged, nil, nil},
			{holds(at, nil), pipeline.Unchanged, nil, nil},
		}},
		{"a flicker recovers nothing", []round{
			{holds(at, stale), pipeline.Unchanged, nil, nil},
			{holds(at, stale), pipeline.Began, stale, stale},
			{holds(at, nil), pipeline.Persists, nil, stale},
			{holds(at, stale), pipeline.Persists, nil, stale},
			{holds(at, nil), pipeline.Persists, nil, stale},
		}},
		{"unknown rounds count for neither", []round{
			{holds(at, stale), pipeline.Unchanged, nil, nil},
			{holds(at, nil, pipeline.SignalStale), pipeline.Unchanged, nil, nil},
			{holds(at, stale), pipeline.Began, stale, stale},
			{holds(at, nil), pipeline.Persists, nil, stale},
			{holds(at, nil, pipeline.SignalStale), pipeline.Persists, nil, stale},
			{holds(at, nil), pipeline.Recovered, nil, nil},
		}},
		{"another signal joins", []round{
			{holds(at, stale), pipeline.Unchanged, nil, nil},
			{holds(at, lag), pipeline.Began, stale, stale},
			{holds(at, lag), pipeline.Grew, []pipeline.Signal{pipeline.SignalLag}, lag},
			{holds(at, stale), pipeline.Persists, nil, lag},
			{holds(at, stale), pipeline.Persists, nil, stale},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st pipeline.DetectState
			for i, r := range tt.rounds {
				var change pipeline.Change
				var fresh []pipeline.Signal
				st, change, fresh = pipeline.Step(st, r.obs)
				if change != r.change || !reflect.DeepEqual(fresh, r.fresh) || !reflect.DeepEqual(st.Active(), r.active) {
					t.Fatalf("round %d: change %d, fresh %v, active %v; want %d, %v, %v", i+1, change, fresh, st.Active(), r.change, r.fresh, r.active)
				}
			}
		})
	}
}
