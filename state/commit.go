package state

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// committer lets concurrent RecordAlerts calls share one script run (a group commit). Under
// load many webhooks arrive while a run is in flight, and each round trip costs Redis more
// than the few commands an alert needs. A call that finds fewer than maxRuns runs in flight
// runs at once, so a lone webhook waits for nobody; with two in flight, Redis works on one
// while this process sends the other or hands out its answers.
type committer struct {
	mu      sync.Mutex
	queue   []*commitReq
	running int // runs in flight
	// beforeRun, when set (tests), is called before each run.
	beforeRun func()
}

type commitReq struct {
	recs []AlertRecord
	out  []Outcome
	err  error
	done chan struct{}
}

// maxRuns is how many runs may be in flight at once.
const maxRuns = 2

// maxCommitAlerts bounds one run's alerts, so that one script does not hold Redis for long.
// A single call with more still runs, alone.
const maxCommitAlerts = 1000

// commitTimeout bounds a shared run when Store.CommitTimeout is not set (app.Options sets it).
const commitTimeout = 10 * time.Second

// commitTimeout bounds a shared run: it must not end with the request that happened to start it.
func (s *Store) commitTimeout() time.Duration {
	if s.CommitTimeout > 0 {
		return s.CommitTimeout
	}
	return commitTimeout
}

// RecordAlerts records a webhook's alerts: each alert is recorded as if alone, in order, and
// no other client sees the call half done. Calls made while another is in flight share the
// next script run. Errors wrap ErrUnavailable when Redis is unreachable. After an error the
// alerts may have been recorded all the same (an answer lost on the way back): the sender
// retries, and those alerts count once more as duplicates; none is lost. With
// MinReplicasAcked, an error wrapping ErrNotReplicated comes with the outcomes: the alerts are
// recorded on the primary, but too few replicas confirmed them (replicas.go).
func (s *Store) RecordAlerts(ctx context.Context, as []AlertRecord) ([]Outcome, error) {
	for _, a := range as {
		if a.Key == "" {
			return nil, errors.New("record alert: empty dedup key")
		}
	}
	if len(as) == 0 {
		return nil, nil
	}
	req := &commitReq{recs: as, done: make(chan struct{})}
	c := &s.commit
	c.mu.Lock()
	c.queue = append(c.queue, req)
	lead := c.running < maxRuns
	if lead {
		c.running++
	}
	c.mu.Unlock()
	if lead {
		s.runCommits(context.WithoutCancel(ctx), req)
	}
	select {
	case <-req.done:
		return req.out, req.err
	case <-ctx.Done():
		// The run goes on for the others; this call's alerts may or may not be recorded.
		return nil, wrap("record alert", ctx.Err())
	}
}

// runCommits runs the queued calls, oldest first, until mine is done (another run may have
// taken it); then a new goroutine takes over what is still queued, so that the caller answers
// its webhook at once.
func (s *Store) runCommits(ctx context.Context, mine *commitReq) {
	c := &s.commit
	for {
		if mine != nil && mine.finished() {
			go s.runCommits(ctx, nil)
			return
		}
		c.mu.Lock()
		n, alerts := 0, 0
		for n < len(c.queue) && (n == 0 || alerts+len(c.queue[n].recs) <= maxCommitAlerts) {
			alerts += len(c.queue[n].recs)
			n++
		}
		if n == 0 {
			c.running--
			c.mu.Unlock()
			return
		}
		batch := slices.Clone(c.queue[:n])
		c.queue = slices.Delete(c.queue, 0, n)
		hook := c.beforeRun
		c.mu.Unlock()
		if hook != nil {
			hook()
		}
		s.runBatch(ctx, batch, alerts)
	}
}

func (r *commitReq) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// runBatch records the alerts of batch in one script run and hands each call its outcomes.
func (s *Store) runBatch(ctx context.Context, batch []*commitReq, alerts int) {
	ctx, cancel := context.WithTimeout(ctx, s.commitTimeout())
	defer cancel()
	all := make([]AlertRecord, 0, alerts)
	for _, r := range batch {
		all = append(all, r.recs...)
	}
	out, err := s.recordReplicated(ctx, all)
	for _, r := range batch {
		if out != nil { // recorded; an error then says the replicas did not confirm it
			r.out, out = out[:len(r.recs):len(r.recs)], out[len(r.recs):]
		}
		r.err = err
		close(r.done)
	}
}

// recordBatch runs recordScript once over as on rdb, matched against the label silences in
// force; when they changed meanwhile (another replica made or ended one), it reads them again
// and runs again.
func (s *Store) recordBatch(ctx context.Context, rdb redis.Scripter, as []AlertRecord) ([]Outcome, error) {
	// What does not depend on the silences is computed once: every alert's arguments but the
	// last (its silence), in one slice.
	const fixed = 13
	per := make([]any, 0, fixed*len(as))
	for _, a := range as {
		status := "firing"
		if a.Resolved {
			status = "resolved"
		}
		labels, digest := labelsAndDigest(a)
		per = append(per, a.Key, keyHash(a.Key), a.Fingerprint, status, a.Title, a.Severity, a.Pipeline, a.Channel,
			a.Source, a.Detail, labels, digest, linksJSON(a.Links))
	}
	for attempt := 0; ; attempt++ {
		version, active, err := s.labelSilences(ctx, attempt > 0)
		if err != nil {
			return nil, err
		}
		now := s.now()
		correlate := "0"
		if s.CorrelatePipeline {
			correlate = "1"
		}
		args := make([]any, 0, recordHeader+len(recordArgNames)*len(as))
		args = append(args, ms(now), s.Coalesce.Milliseconds(), ms(now)-s.Coalesce.Milliseconds(), max(s.AutoResolveAfter, 0).Milliseconds(),
			max(s.FloodLimit, 0), s.FloodQuietFor.Milliseconds(), version, correlate, s.FloodExempt)
		for i, a := range as {
			args = append(args, per[i*fixed:(i+1)*fixed]...)
			args = append(args, silenceOf(active, a, now))
		}
		res, err := s.one(s.runOn(ctx, rdb, recordScript, []string{s.base}, args...).Result())
		if err != nil {
			return nil, wrap("record alert", err)
		}
		if res.has("stale") {
			if attempt < 10 {
				continue
			}
			return nil, wrap("record alert", errors.New("the silences keep changing; try again"))
		}
		if res.len() != len(as) {
			return nil, wrap("record alert", fmt.Errorf("unexpected script answer of %d rows for %d alerts", res.len(), len(as)))
		}
		out := make([]Outcome, len(as))
		var keep []any
		for i := range out {
			out[i] = Outcome{Incident: res.str(i, "id"), Result: res.str(i, "outcome"), Previous: res.str(i, "previous")}
			if res.str(i, "keep") == "1" {
				keep = append(keep, out[i].Incident, as[i].Fingerprint, alertContext(as[i]))
			}
			switch out[i].Result {
			case "flood_opened":
				out[i].Result, out[i].FloodOpened = ResultFlooded, true
			case ResultSilenced:
				out[i].Silence, out[i].Previous = out[i].Previous, ""
			}
		}
		if len(keep) > 0 {
			// The alerts are recorded: a context that cannot be kept now only leaves incident
			// show without their labels, which is no reason to make the sender retry.
			_ = s.runOn(ctx, rdb, keepContextScript, []string{s.base}, keep...).Err()
		}
		return out, nil
	}
}

// Bounds of the labels an alert passes to a flood's ranking of label values.
const (
	maxLabels     = 16
	maxLabelBytes = 120
)

// labelsAndDigest sorts an alert's labels once for what the record script takes of them: the
// label list a flood ranks ("name=value" pairs, sorted, separated by "\x1f", which is dropped
// from names and values; at most maxLabels, each cut to maxLabelBytes) and the alert's digest
// (alertDigest's, which it equals).
func labelsAndDigest(a AlertRecord) (string, string) {
	var small [16]string // labels are few: no allocation
	names := small[:0]
	for k := range a.Labels {
		names = append(names, k)
	}
	slices.Sort(names)
	h := fnvField(fnvOffset, "")
	var b strings.Builder
	for i, k := range names {
		v := a.Labels[k]
		h = fnvField(fnvField(h, k), v)
		if i >= maxLabels {
			continue
		}
		if i > 0 {
			b.WriteByte(0x1f)
		}
		lv := k + "=" + v
		if strings.IndexByte(lv, 0x1f) >= 0 {
			lv = strings.ReplaceAll(lv, "\x1f", "")
		}
		if len(lv) > maxLabelBytes {
			lv = strings.ToValidUTF8(lv[:maxLabelBytes], "")
		}
		b.WriteString(lv)
	}
	var d [8]byte
	binary.BigEndian.PutUint32(d[:4], uint32(h^h>>32))
	binary.BigEndian.PutUint32(d[4:], mapDigest(a.Annotations, a.Title))
	return b.String(), hex.EncodeToString(d[:])
}
