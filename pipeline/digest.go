package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/probe"
)

// DigestRow is one pipeline's line of the digest.
type DigestRow struct {
	Pipeline  string
	Status    string // OK, DEGRADED, FAILED, or "never probed"
	Since     time.Time
	CommitAge time.Duration // -1 when unknown
	Lag       []int64       // recent total lag samples, oldest first
}

// Digest is the health summary posted on health.digest_schedule and shown by `status`.
type Digest struct {
	At     time.Time
	Rows   []DigestRow
	Missed int64 // scheduled ticks nobody ran since the last digest
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
		row := DigestRow{Pipeline: p.Name, Status: last.Status, Since: last.Since, CommitAge: -1}
		if row.Status == "" {
			row.Status = "never probed"
		}
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

// Lines renders the digest as a table.
func (d Digest) Lines() []string {
	lines := []string{fmt.Sprintf("%-20s %-13s %-12s %-12s %s", "PIPELINE", "PROBE", "LAST COMMIT", "LAG", "LAG TREND")}
	for _, r := range d.Rows {
		age := "-"
		if r.CommitAge >= 0 {
			age = Age(r.CommitAge) + " ago"
		}
		lag := "-"
		if len(r.Lag) > 0 {
			lag = fmt.Sprint(r.Lag[len(r.Lag)-1])
		}
		lines = append(lines, fmt.Sprintf("%-20s %-13s %-12s %-12s %s", r.Pipeline, r.Status, age, lag, Sparkline(r.Lag)))
	}
	if d.Missed > 0 {
		lines = append(lines, fmt.Sprintf("%d scheduled tick(s) were missed since the last digest: no replica was running.", d.Missed))
	}
	return lines
}

// Text is the digest as one message.
func (d Digest) Text() string {
	return "Pipeline health at " + d.At.UTC().Format("2006-01-02 15:04Z") + "\n```\n" + strings.Join(d.Lines(), "\n") + "\n```"
}

// Sparkline draws values with the eight block characters, scaled between their min and max.
func Sparkline(values []int64) string {
	if len(values) == 0 {
		return ""
	}
	const bars = "▁▂▃▄▅▆▇█"
	runes := []rune(bars)
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for _, v := range values {
		i := 0
		if hi > lo {
			i = int((v - lo) * int64(len(runes)-1) / (hi - lo))
		}
		b.WriteRune(runes[i])
	}
	return b.String()
}

// Age renders a duration the way people read ages: 45s, 7m, 3h10m, 2d4h.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
