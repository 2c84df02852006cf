package scheduler_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/scheduler"
	"github.com/streamwatch/streamwatch/state"
)

// TestSchedulerRunsEachTickOnce runs two schedulers (two replicas, two Redis clients) with
// the same job: every tick runs exactly once in total.
func TestSchedulerRunsEachTickOnce(t *testing.T) {
	rdb1, prefix := testredis.Client(t)
	rdb2, _ := testredis.Client(t)
	sched, err := config.ParseSchedule("@every 1s")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	runs := map[int64][]string{}
	ticks := make(chan struct{}, 100)
	job := func(replica string) scheduler.Job {
		return scheduler.Job{Name: "probe:sms-replies", Schedule: sched, Run: func(_ context.Context, tick time.Time, _ int) error {
			mu.Lock()
			runs[tick.Unix()] = append(runs[tick.Unix()], replica)
			mu.Unlock()
			ticks <- struct{}{}
			return nil
		}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, rdb := range []*state.Store{state.New(rdb1, prefix), state.New(rdb2, prefix)} {
		s := &scheduler.Scheduler{Store: rdb, Log: slog.New(slog.DiscardHandler), Replica: []string{"a", "b"}[i]}
		s.Add(job(s.Replica))
		wg.Add(1)
		go func() { defer wg.Done(); s.Run(ctx) }()
	}
	for i := 0; i < 3; i++ {
		select {
		case <-ticks:
		case <-time.After(10 * time.Second):
			t.Fatal("no tick ran")
		}
	}
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for tick, who := range runs {
		if len(who) != 1 {
			t.Fatalf("tick %d ran %d times (%v)", tick, len(who), who)
		}
	}
}

func TestNextTickAlignsConstantDelays(t *testing.T) {
	every5m, _ := config.ParseSchedule("@every 5m")
	a := scheduler.NextTick(every5m, time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC))
	b := scheduler.NextTick(every5m, time.Date(2026, 11, 30, 10, 42, 59, 0, time.UTC))
	if !a.Equal(b) || !a.Equal(time.Date(2026, 11, 30, 10, 45, 0, 0, time.UTC)) {
		t.Fatalf("replicas disagree on the tick: %v %v", a, b)
	}
	weekdays, _ := config.ParseSchedule("CRON_TZ=UTC 0 9 * * 1-5")
	if got := scheduler.NextTick(weekdays, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("weekday schedule next = %v", got)
	}
	var _ cron.Schedule = every5m
}

// TestSchedulerCountsMissedTicks: a tick nobody ran is counted and handed to the next run.
func TestSchedulerCountsMissedTicks(t *testing.T) {
	rdb, prefix := testredis.Client(t)
	st := state.New(rdb, prefix)
	ctx := context.Background()
	sched, _ := config.ParseSchedule("@every 1s")
	// A previous replica ran a tick 5 s ago and then everything was down.
	past := time.Now().Add(-5 * time.Second).Truncate(time.Second)
	if err := st.SetLastTick(ctx, "digest", past, 0); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	s := &scheduler.Scheduler{Store: st, Log: slog.New(slog.DiscardHandler), Replica: "a"}
	s.Add(scheduler.Job{Name: "digest", Schedule: sched, Run: func(_ context.Context, _ time.Time, missed int) error {
		select {
		case got <- missed:
		default:
		}
		return nil
	}})
	rctx, cancel := context.WithCancel(ctx)
	go s.Run(rctx)
	defer cancel()
	select {
	case n := <-got:
		if n < 4 {
			t.Fatalf("missed = %d, want at least 4", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("job did not run")
	}
	if n, _ := st.TakeMissed(ctx, "digest"); n < 4 {
		t.Fatalf("stored missed = %d", n)
	}
	if n, _ := st.TakeMissed(ctx, "digest"); n != 0 {
		t.Fatalf("missed not reset: %d", n)
	}
}

// TestFrequentJobRunsEachTickOnce: a job more frequent than a second (the housekeeping) runs
// each tick on one of two replicas; a job for every replica runs on both.
func TestFrequentJobRunsEachTickOnce(t *testing.T) {
	rdb1, prefix := testredis.Client(t)
	rdb2, _ := testredis.Client(t)
	var mu sync.Mutex
	runs := map[string]map[int64][]string{"maintain": {}, "gauges": {}}
	job := func(name, replica string, every bool) scheduler.Job {
		return scheduler.Job{Name: name, Schedule: cron.ConstantDelaySchedule{Delay: 50 * time.Millisecond}, EveryReplica: every,
			Run: func(_ context.Context, tick time.Time, _ int) error {
				mu.Lock()
				runs[name][tick.UnixMilli()] = append(runs[name][tick.UnixMilli()], replica)
				mu.Unlock()
				return nil
			}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, st := range []*state.Store{state.New(rdb1, prefix), state.New(rdb2, prefix)} {
		s := &scheduler.Scheduler{Store: st, Log: slog.New(slog.DiscardHandler), Replica: []string{"a", "b"}[i]}
		s.Add(job("maintain", s.Replica, false))
		s.Add(job("gauges", s.Replica, true))
		wg.Go(func() { s.Run(ctx) })
	}
	wait.For(t, 10*time.Second, "ten ticks of the frequent job", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(runs["maintain"]) >= 10
	})
	cancel()
	wg.Wait()
	for tick, who := range runs["maintain"] {
		if len(who) != 1 {
			t.Fatalf("tick %d ran %d times (%v)", tick, len(who), who)
		}
	}
	both := 0
	for _, who := range runs["gauges"] {
		if len(who) == 2 {
			both++
		}
	}
	if both == 0 {
		t.Fatalf("the job of every replica never ran on both: %v", runs["gauges"])
	}
}
