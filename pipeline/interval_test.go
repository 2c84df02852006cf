package pipeline_test

import (
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

func TestBatchInterval(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	at := func(batch int64, s float64) state.Commit {
		return state.Commit{Batch: batch, At: t0.Add(time.Duration(s * float64(time.Second)))}
	}
	for _, tc := range []struct {
		name string
		h    []state.Commit
		want time.Duration
	}{
		{"too few", []state.Commit{at(1, 0), at(2, 2), at(3, 4)}, 0},
		{"every 2s", []state.Commit{at(1, 0), at(2, 2), at(3, 4), at(4, 6)}, 2 * time.Second},
		{"a slow batch and a restart's pause are ignored", []state.Commit{at(1, 0), at(2, 2), at(3, 30), at(4, 32), at(5, 34), at(6, 300), at(7, 302)}, 2 * time.Second},
		{"skipped batches count per batch", []state.Commit{at(10, 0), at(12, 4), at(14, 8), at(16, 12)}, 2 * time.Second},
		{"15-minute trigger", []state.Commit{at(1, 0), at(2, 900), at(3, 1800), at(4, 2700)}, 15 * time.Minute},
	} {
		if got := pipeline.BatchInterval(tc.h); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	auto := &config.Pipeline{Checkpoint: config.Checkpoint{StaleAfter: 10 * time.Minute, StaleAuto: true}}
	fixed := &config.Pipeline{Checkpoint: config.Checkpoint{StaleAfter: 10 * time.Minute}}
	for _, tc := range []struct {
		p        *config.Pipeline
		interval time.Duration
		want     time.Duration
	}{
		{auto, 0, 10 * time.Minute},               // not learned yet: the default
		{auto, 2 * time.Second, 20 * time.Second}, // the floor
		{auto, 15 * time.Minute, 75 * time.Minute},
		{fixed, 2 * time.Second, 10 * time.Minute},
	} {
		if got := pipeline.StaleAfter(tc.p, tc.interval); got != tc.want {
			t.Errorf("StaleAfter(auto %v, %v) = %v, want %v", tc.p.Checkpoint.StaleAuto, tc.interval, got, tc.want)
		}
	}
}
