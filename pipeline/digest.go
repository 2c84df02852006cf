package pipeline

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/streamwatch/streamwatch/integrations/probe"
)

// DigestRow is one pipeline's line of the digest.
type DigestRow struct {
	Pipeline    string
	Description string // pipelines[].description
	Status      string // OK, DEGRADED, FAILED, or "" (never probed)
	Since       time.Time
	CommitAge   time.Duration // -1 when unknown
	Lag         []int64       // recent total lag samples, oldest first
}

// Digest is the health summary posted on health.digest_schedule and shown by `status`.
type Digest struct {
	At     time.Time
	Rows   []DigestRow
	Missed int64 // scheduled ticks nobody ran since the last digest
	// Notes are detection's symptoms and publish_group refusals, one line each.
	Notes []StatusNote
}

// StatusNoteKind says what a status note reports.
type StatusNoteKind string

// The status notes.
const (
	// NoteDetected: detection's symptoms are active (Active, with the Observation's numbers,
	// posted in Incident).
	NoteDetected StatusNoteKind = "detected"
	// NoteLivenessUnwatched: detect.heartbeat_after is set but the driver log cannot tell
	// (Observation.Liveness says why).
	NoteLivenessUnwatched StatusNoteKind = "liveness_unwatched"
	// NotePublishRefused: streamwatch has not committed to the publish group since
	// Publish.Since (Publish.Refused says why).
	NotePublishRefused StatusNoteKind = "publish_refused"
)

// StatusNote is one line detection adds below the digest's table, as data.
type StatusNote struct {
	Kind        StatusNoteKind
	Pipeline    string
	Active      []Signal
	Observation Observation
	Incident    string
	Publish     PublishState
}

// Digest builds the summary of every pipeline.
func (s *Probes) Digest(ctx context.Context) (Digest, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	d := Digest{At: now()}
	for _, p := range s.Pipelines {
		last, err := s.Store.LastProbe(ctx, p.Name)
		if err != nil {
			return d, err
		}
		row := DigestRow{Pipeline: p.Name, Description: p.Description, Status: last.Status, Since: last.Since, CommitAge: -1}
		var res probe.Result
		if json.Unmarshal(last.Last.Result, &res) == nil && !res.NewestCommit.IsZero() {
			row.CommitAge = d.At.Sub(res.NewestCommit)
		}
		if s.Lag != nil {
			if lag, err := s.Lag.RecentLag(ctx, p.Name); err == nil {
				row.Lag = lag
			}
		}
		d.Rows = append(d.Rows, row)
	}
	sort.SliceStable(d.Rows, func(i, j int) bool { return rank(d.Rows[i].Status) < rank(d.Rows[j].Status) })
	if s.Notes != nil {
		notes, err := s.Notes.StatusNotes(ctx)
		if err != nil {
			return d, err
		}
		d.Notes = notes
	}
	return d, nil
}

func rank(status string) int {
	switch status {
	case "FAILED":
		return 0
	case "DEGRADED":
		return 1
	case "OK":
		return 3
	}
	return 2
}
