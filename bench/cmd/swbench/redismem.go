package main

import (
	"context"
	"fmt"
	"time"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// memResult is what Redis holds for one shape of load.
type memResult struct {
	name  string
	bytes int64 // used_memory after − before
	per   int64 // divisor for a per-item figure (0: none)
	unit  string
	note  string
}

// redisMemory measures Redis memory on a fresh redis-server of its own (configured as the
// others), through the state package that streamwatch records with (the same scripts), one
// shape at a time on an emptied server: used_memory (INFO) after − before.
func (e *env) redisMemory(ctx context.Context, res *results) error {
	r, err := startRedis(ctx, e.tmp, "redis-memory")
	if err != nil {
		return err
	}
	defer r.close()
	measure := func(name, unit string, per int64, note string, setup, load func(st *state.Store) error) error {
		if err := r.client.FlushAll(ctx).Err(); err != nil {
			return err
		}
		st := state.New(r.client, "mem")
		st.Retention, st.FloodQuietFor = 2160*time.Hour, 5*time.Minute
		if err := st.EnsureOutbox(ctx); err != nil {
			return err
		}
		if setup != nil {
			if err := setup(st); err != nil {
				return err
			}
		}
		before, err := r.usedMemory(ctx)
		if err != nil {
			return err
		}
		if err := load(st); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		after, err := r.usedMemory(ctx)
		if err != nil {
			return err
		}
		m := memResult{name: name, bytes: after - before, per: per, unit: unit, note: note}
		res.memory = append(res.memory, m)
		e.logf("Redis memory, %s: %.2f MiB%s", name, float64(m.bytes)/(1<<20), perText(m))
		return nil
	}
	distinctAlerts := func(st *state.Store, n int, tag string) error {
		batch := make([]state.AlertRecord, 0, 1000)
		for i := range n {
			key := fmt.Sprintf("alertname=bench %s %d|pipeline=", tag, i)
			batch = append(batch, state.AlertRecord{Key: key, Fingerprint: fmt.Sprintf("%016x", i), Title: fmt.Sprintf("bench %s %d", tag, i),
				Severity: 3, Channel: alertChannel, Source: "alertmanager", Detail: "alert from the streamwatch load generator",
				Labels: map[string]string{"alertname": fmt.Sprintf("bench %s %d", tag, i), "service": "bench", "severity": "warning", "instance": "bench-1"}})
			if len(batch) == cap(batch) || i == n-1 {
				if _, err := st.RecordAlerts(ctx, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		return nil
	}
	deliver := func(st *state.Store) error { // as the deliverer does: roots get their ts, entries go
		for i := 0; ; {
			ds, err := st.ReadOutbox(ctx, "bench", false, 500, -1)
			if err != nil || len(ds) == 0 {
				return err
			}
			for _, d := range ds {
				i++
				if err := st.Complete(ctx, d, fmt.Sprintf("1700000000.%06d", i), d.Channel); err != nil {
					return err
				}
			}
		}
	}
	const incidents, alertsPer, flood = 10000, state.MaxListedAlerts, 100000
	oneAlert := func(key, fp string) state.AlertRecord {
		return state.AlertRecord{Key: key, Fingerprint: fp, Title: key, Channel: alertChannel}
	}
	if err := measure("open incidents (flood protection off; roots delivered)", "bytes per incident", incidents,
		"an incident's hash, its alert list of one, its dedup key, its place among the open ones, its root's lookup",
		nil, func(st *state.Store) error {
			if err := distinctAlerts(st, incidents, "inc"); err != nil {
				return err
			}
			return deliver(st)
		}); err != nil {
		return err
	}
	if err := measure(fmt.Sprintf("alerts of one incident (%s distinct fingerprints, the list's cap)", human.Digits(alertsPer)),
		"bytes per alert", alertsPer-1, "one entry of the incident's alert list",
		func(st *state.Store) error {
			_, err := st.RecordAlert(ctx, oneAlert("one", "fp-0"))
			return err
		}, func(st *state.Store) error {
			for i := 1; i < alertsPer; i++ {
				if _, err := st.RecordAlert(ctx, oneAlert("one", fmt.Sprint("fp-", i))); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
		return err
	}
	if err := measure("10,000 duplicates of one alert", "bytes per duplicate", 10000, "counters only",
		func(st *state.Store) error {
			_, err := st.RecordAlert(ctx, oneAlert("dup", "fp"))
			return err
		}, func(st *state.Store) error {
			batch := make([]state.AlertRecord, 1000)
			for i := range batch {
				batch[i] = oneAlert("dup", "fp")
			}
			for range 10 {
				if _, err := st.RecordAlerts(ctx, batch); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
		return err
	}
	if err := measure(fmt.Sprintf("%s distinct alerts in one channel, flood protection on (20 a minute)", human.Digits(flood)), "", 0,
		"20 incidents and one flood incident listing 10,000 keys and counting the rest", nil, func(st *state.Store) error {
			st.FloodLimit = 20
			return distinctAlerts(st, flood, "flood")
		}); err != nil {
		return err
	}
	return measure(fmt.Sprintf("%s distinct alerts in one channel, flood protection off", human.Digits(flood)), "", 0,
		"100,000 incidents with their roots still in the outbox (at Slack's 1 message/s, 28 hours of posting)", nil,
		func(st *state.Store) error { return distinctAlerts(st, flood, "noflood") })
}

func perText(m memResult) string {
	if m.per == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d %s)", m.bytes/m.per, m.unit)
}
