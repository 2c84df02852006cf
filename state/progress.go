package state

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Progress keeps each pipeline's progress samples for charts, bounded: every sampling round of
// the last hour (FullResolution) in P:progress:<pipeline>, and before that one point a minute
// up to the window in P:progress:<pipeline>:minutes; probe results of the window in
// P:progress:<pipeline>:probes. A round older than the hour folds into its minute's point as
// it leaves: the minute's highest numbers (waiting, lag, oldest age: a peak is never lost)
// and its newest batch and commit. Every key expires a window after its last write, so a
// pipeline that is no longer sampled leaves nothing behind.
//
// A sample is one line of text, "t,w,g,o,b,c" (Unix seconds; records waiting, group lag,
// oldest age in seconds, batch, and the commit's age in seconds at t; an empty field is
// unknown), about 30 bytes: the scripts (lua/record_progress.lua, lua/record_probe_mark.lua) fold
// it in Redis's Lua, which has no binary decoding.
type Progress struct {
	st     *Store
	window time.Duration
}

// FullResolution is how long every round is kept before it folds into its minute.
const FullResolution = time.Hour

// maxProbeMarks bounds the probe results kept per pipeline, whatever the window and schedule.
const maxProbeMarks = 1000

// NewProgress keeps progress samples in s for window (charts.window).
func NewProgress(s *Store, window time.Duration) *Progress {
	return &Progress{st: s, window: window}
}

// Window is how far back samples are kept.
func (p *Progress) Window() time.Duration { return p.window }

// ProgressSample is one pipeline's numbers of one sampling round (or, older than an hour, of
// one minute: its highest numbers and newest commit).
type ProgressSample struct {
	At time.Time // to the second
	// Waiting is the records beyond the checkpoint, GroupLag the documented group's lag
	// (-1: unknown).
	Waiting, GroupLag int64
	// Oldest is the age of the oldest waiting record, to the second (-1: unknown).
	Oldest time.Duration
	// Batch is the checkpoint's newest committed batch and CommittedAt when it was committed
	// (-1 and zero: no checkpoint, or unknown).
	Batch       int64
	CommittedAt time.Time
}

// ProbeMark is a probe's result as a chart marks it.
type ProbeMark struct {
	At time.Time
	OK bool
}

func (p *Progress) key(pipeline string, parts ...string) string {
	return p.st.key(append([]string{"progress", pipeline}, parts...)...)
}

// Record stores one sampling round's samples, by pipeline, in one script run.
func (p *Progress) Record(ctx context.Context, samples map[string]ProgressSample) error {
	if len(samples) == 0 {
		return nil
	}
	names := make([]string, 0, len(samples))
	for name := range samples {
		names = append(names, name)
	}
	sort.Strings(names)
	horizon := min(FullResolution, p.window)
	args := []any{int64(horizon / time.Second), int64(p.window / time.Second), p.window.Milliseconds()}
	for _, name := range names {
		if samples[name].At.IsZero() {
			return fmt.Errorf("record progress samples: the sample of %s has no time", name)
		}
		args = append(args, name, encodeProgress(samples[name]))
	}
	if _, err := p.st.one(p.st.run(ctx, recordProgressScript, []string{p.st.base}, args...).Result()); err != nil {
		return wrap("record progress samples", err)
	}
	return nil
}

// Samples returns a pipeline's samples at or after since, oldest first: minute points, then
// every round of the last hour.
func (p *Progress) Samples(ctx context.Context, pipeline string, since time.Time) ([]ProgressSample, error) {
	pipe := p.st.rdb.Pipeline()
	mins := pipe.LRange(ctx, p.key(pipeline, "minutes"), 0, -1)
	raw := pipe.LRange(ctx, p.key(pipeline), 0, -1)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("read progress samples of "+pipeline, err)
	}
	var out []ProgressSample
	for _, v := range append(mins.Val(), raw.Val()...) {
		s, err := decodeProgress(v)
		if err != nil {
			return nil, fmt.Errorf("progress samples of %s: %w", pipeline, err)
		}
		if !s.At.Before(since) {
			out = append(out, s)
		}
	}
	return out, nil
}

// RecordProbe keeps a probe result of pipeline for its charts.
func (p *Progress) RecordProbe(ctx context.Context, pipeline string, m ProbeMark) error {
	ok := "0"
	if m.OK {
		ok = "1"
	}
	_, err := p.st.one(p.st.run(ctx, recordProbeMarkScript, []string{p.key(pipeline, "probes")},
		strconv.FormatInt(m.At.Unix(), 10)+","+ok, m.At.Add(-p.window).Unix(), maxProbeMarks, p.window.Milliseconds()).Result())
	return wrap("record a probe result of "+pipeline, err)
}

// Probes returns a pipeline's probe results at or after since, oldest first.
func (p *Progress) Probes(ctx context.Context, pipeline string, since time.Time) ([]ProbeMark, error) {
	vals, err := p.st.rdb.LRange(ctx, p.key(pipeline, "probes"), 0, -1).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("read probe results of "+pipeline, err)
	}
	var out []ProbeMark
	for _, v := range vals {
		t, ok, found := strings.Cut(v, ",")
		sec, err := strconv.ParseInt(t, 10, 64)
		if !found || err != nil {
			return nil, fmt.Errorf("probe results of %s: %w: %q", pipeline, errBadProgress, v)
		}
		if at := time.Unix(sec, 0).UTC(); !at.Before(since) {
			out = append(out, ProbeMark{At: at, OK: ok == "1"})
		}
	}
	return out, nil
}

var errBadProgress = errors.New("corrupt progress sample")

// encodeProgress writes s as the scripts read it.
func encodeProgress(s ProgressSample) string {
	t := s.At.Unix()
	field := func(v int64) string {
		if v < 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
	c := ""
	if !s.CommittedAt.IsZero() && s.Batch >= 0 {
		c = strconv.FormatInt(t-s.CommittedAt.Unix(), 10)
	}
	oldest := int64(-1)
	if s.Oldest >= 0 {
		oldest = int64(s.Oldest / time.Second)
	}
	return strings.Join([]string{strconv.FormatInt(t, 10), field(s.Waiting), field(s.GroupLag), field(oldest), field(s.Batch), c}, ",")
}

func decodeProgress(v string) (ProgressSample, error) {
	f := strings.Split(v, ",")
	if len(f) != 6 {
		return ProgressSample{}, fmt.Errorf("%w: %q", errBadProgress, v)
	}
	n := make([]int64, 6)
	for i, x := range f {
		if x == "" {
			n[i] = -1
			if i == 0 {
				return ProgressSample{}, fmt.Errorf("%w: %q", errBadProgress, v)
			}
			continue
		}
		var err error
		if n[i], err = strconv.ParseInt(x, 10, 64); err != nil {
			return ProgressSample{}, fmt.Errorf("%w: %q", errBadProgress, v)
		}
	}
	s := ProgressSample{At: time.Unix(n[0], 0).UTC(), Waiting: n[1], GroupLag: n[2], Oldest: -1, Batch: n[4]}
	if n[3] >= 0 {
		s.Oldest = time.Duration(n[3]) * time.Second
	}
	if f[5] != "" {
		s.CommittedAt = time.Unix(n[0]-n[5], 0).UTC()
	}
	return s, nil
}
