// Package scheduler runs streamwatch's scheduled jobs (app/jobs.go: the probes, the health
// digest, the recovery watches, escalations, heartbeats, the Kafka sampling round) so that each
// tick runs once in the whole deployment, whichever replicas are up (a Redis lock a tick), and
// says how many ticks nobody ran.
package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Job is a scheduled task. Run gets the tick it runs for and the ticks missed before it
// (no replica was up for them).
type Job struct {
	Name     string
	Schedule cron.Schedule
	Run      func(ctx context.Context, tick time.Time, missed int) error
}

// Scheduler runs jobs on their schedules, each tick once in the whole deployment: every
// replica computes the same tick times, and a Redis lock per job and tick (with an expiry, so
// a dead replica's lock frees itself) lets one of them run it.
type Scheduler struct {
	Store   Ticks
	Log     *slog.Logger
	Replica string
	Now     func() time.Time
	jobs    []Job
}

// Ticks is where the scheduler keeps its locks and the newest tick of each job (state.Store).
type Ticks interface {
	TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	LastTick(ctx context.Context, job string) (time.Time, error)
	SetLastTick(ctx context.Context, job string, tick time.Time, missed int) error
}

// Add schedules a job.
func (s *Scheduler) Add(j Job) { s.jobs = append(s.jobs, j) }

// Run runs every job's loop until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	if s.Now == nil {
		s.Now = time.Now
	}
	var wg sync.WaitGroup
	for _, j := range s.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.loop(ctx, j)
		}()
	}
	wg.Wait()
}

// NextTick is the job's next tick after t. Constant-delay schedules ("@every 5m") are aligned
// to the Unix epoch, so that replicas started at different times agree on the ticks.
func NextTick(sched cron.Schedule, t time.Time) time.Time {
	if cd, ok := sched.(cron.ConstantDelaySchedule); ok {
		d := cd.Delay
		if d < time.Second {
			d = time.Second
		}
		return time.Unix(0, (t.UnixNano()/int64(d)+1)*int64(d))
	}
	return sched.Next(t)
}

func (s *Scheduler) loop(ctx context.Context, j Job) {
	next := NextTick(j.Schedule, s.Now())
	for {
		wait := time.Until(next)
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		tick := next
		next = NextTick(j.Schedule, tick)
		s.runTick(ctx, j, tick, next)
	}
}

func (s *Scheduler) runTick(ctx context.Context, j Job, tick, next time.Time) {
	// The lock outlives the tick's period, so a slow replica cannot take a tick another ran.
	ttl := max(2*next.Sub(tick), time.Minute)
	ttl = min(ttl, 48*time.Hour)
	name := fmt.Sprintf("job:%s:%d", j.Name, tick.Unix())
	ok, err := s.Store.TryLock(ctx, name, s.Replica, ttl)
	if err != nil {
		s.Log.Warn("scheduled job skipped: lock unavailable", "job", j.Name, "tick", tick, "err", err)
		return
	}
	if !ok {
		return
	}
	missed := 0
	if last, err := s.Store.LastTick(ctx, j.Name); err == nil && !last.IsZero() {
		for t := NextTick(j.Schedule, last); t.Before(tick) && missed < 10000; t = NextTick(j.Schedule, t) {
			missed++
		}
	}
	if err := s.Store.SetLastTick(ctx, j.Name, tick, missed); err != nil {
		s.Log.Warn("record job tick", "job", j.Name, "err", err)
	}
	if missed > 0 {
		s.Log.Warn("scheduled ticks were missed (no replica ran them)", "job", j.Name, "missed", missed)
	}
	s.Log.Debug("scheduled job runs", "job", j.Name, "tick", tick.Unix(), "replica", s.Replica)
	if err := j.Run(ctx, tick, missed); err != nil {
		s.Log.Warn("scheduled job failed", "job", j.Name, "tick", tick, "err", err)
	}
}
