package kafka

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// DefaultTimedPartitions is how many of the most-lagging partitions get the
// exact age of their oldest unconsumed record.
const DefaultTimedPartitions = 5

// Monitor answers the lag and groups commands for the configured pipelines
// and for ad-hoc groups.
type Monitor struct {
	clusters  *Clusters
	store     SampleStore
	pipelines map[string]Pipeline
	names     []string
	now       func() time.Time
	timed     int
}

// MonitorOptions parameterise NewMonitor.
type MonitorOptions struct {
	Now func() time.Time // nil means time.Now
	// TimedPartitions is how many of the most-lagging partitions get the
	// timestamp of the record at their committed offset fetched; 0 means
	// DefaultTimedPartitions, a negative value none.
	TimedPartitions int
}

// NewMonitor checks pipelines against clusters. store may be nil: reports
// then have no history.
func NewMonitor(clusters *Clusters, store SampleStore, pipelines []Pipeline, opts MonitorOptions) (*Monitor, error) {
	m := &Monitor{clusters: clusters, store: store, pipelines: map[string]Pipeline{}, now: opts.Now, timed: opts.TimedPartitions}
	if m.now == nil {
		m.now = time.Now
	}
	switch {
	case m.timed == 0:
		m.timed = DefaultTimedPartitions
	case m.timed < 0:
		m.timed = 0
	}
	for _, p := range pipelines {
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("a pipeline has no name")
		case len(p.Topics) == 0:
			return nil, fmt.Errorf("pipeline %s: no kafka topics", p.Name)
		case p.Group == "":
			return nil, fmt.Errorf("pipeline %s: no kafka group", p.Name)
		}
		if _, dup := m.pipelines[p.Name]; dup {
			return nil, fmt.Errorf("pipeline %s is configured twice", p.Name)
		}
		if _, err := clusters.Cluster(p.Cluster); err != nil {
			return nil, fmt.Errorf("pipeline %s: %w", p.Name, err)
		}
		p.Topics = slices.Clone(p.Topics)
		m.pipelines[p.Name] = p
		m.names = append(m.names, p.Name)
	}
	sort.Strings(m.names)
	return m, nil
}

// Pipelines lists the pipelines with Kafka settings, sorted by name.
func (m *Monitor) Pipelines() []Pipeline {
	out := make([]Pipeline, len(m.names))
	for i, n := range m.names {
		out[i] = m.pipelines[n]
	}
	return out
}

// Pipeline returns the named pipeline, or an error wrapping
// ErrUnknownPipeline.
func (m *Monitor) Pipeline(name string) (Pipeline, error) {
	p, ok := m.pipelines[name]
	if !ok {
		return Pipeline{}, &notFoundError{msg: fmt.Sprintf("pipeline %q has no kafka settings (known: %s)", name, strings.Join(m.names, ", ")),
			kind: ErrUnknownPipeline}
	}
	return p, nil
}

// ResolveCluster picks the cluster for an ad-hoc command: the named one; or,
// when none is named, the only cluster, or the cluster of the pipelines
// that read topic.
func (m *Monitor) ResolveCluster(name, topic string) (*Cluster, error) {
	if name != "" {
		return m.clusters.Cluster(name)
	}
	names := m.clusters.Names()
	if len(names) == 1 {
		return m.clusters.Cluster(names[0])
	}
	found := map[string]bool{}
	for _, p := range m.pipelines {
		if slices.Contains(p.Topics, topic) {
			found[p.Cluster] = true
		}
	}
	if len(found) == 1 {
		for n := range found {
			return m.clusters.Cluster(n)
		}
	}
	return nil, fmt.Errorf("several kafka clusters are configured (%s): name one with --cluster: %w", strings.Join(names, ", "), ErrUnknownCluster)
}

// PipelineLag answers `lag PIPELINE`: the documented group on the
// pipeline's topics, with its verdict over the stored samples and the
// wrong-group check.
func (m *Monitor) PipelineLag(ctx context.Context, name string) (*LagReport, error) {
	p, err := m.Pipeline(name)
	if err != nil {
		return nil, err
	}
	c, err := m.clusters.Cluster(p.Cluster)
	if err != nil {
		return nil, err
	}
	return m.lag(ctx, c, p.Name, p.Group, p.Topics, EvalOptions{StallAfter: p.stallAfter(), AllowedLag: p.allowedLag()})
}

// GroupLag answers `lag GROUP TOPIC [--cluster NAME]`. When the group does
// not exist it returns the report (log ends, the groups that do consume the
// topic) together with an error wrapping ErrUnknownGroup.
func (m *Monitor) GroupLag(ctx context.Context, cluster, group string, topics ...string) (*LagReport, error) {
	if group == "" || len(topics) == 0 {
		return nil, fmt.Errorf("lag needs a group and a topic")
	}
	c, err := m.ResolveCluster(cluster, topics[0])
	if err != nil {
		return nil, err
	}
	eval := EvalOptions{StallAfter: DefaultStallAfter, AllowedLag: DefaultAllowedLag}
	for _, p := range m.pipelines {
		if p.Group == group && p.Cluster == c.Name() {
			eval = EvalOptions{StallAfter: p.stallAfter(), AllowedLag: p.allowedLag()}
		}
	}
	r, err := m.lag(ctx, c, "", group, topics, eval)
	if err != nil {
		return nil, err
	}
	if !r.GroupExists {
		return r, &unknownGroupError{report: r}
	}
	return r, nil
}

type unknownGroupError struct{ report *LagReport }

func (e *unknownGroupError) Error() string {
	r := e.report
	msg := fmt.Sprintf("consumer group %q does not exist on cluster %s (no members, no commits on %s)", r.Group.Name, r.Cluster,
		strings.Join(r.Topics, ", "))
	if r.Mismatch != nil && len(r.Mismatch.Active) > 0 {
		var names []string
		for _, g := range r.Mismatch.Active {
			names = append(names, g.Group.Name)
		}
		msg += "; consuming it: " + strings.Join(names, ", ")
	}
	return msg
}

func (e *unknownGroupError) Unwrap() error { return ErrUnknownGroup }

// budget derives a context that ends when fraction of ctx's remaining time
// has passed, so later steps keep time to finish a partial answer.
func budget(ctx context.Context, fraction float64) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, time.Now().Add(time.Duration(fraction*float64(time.Until(deadline)))))
}

// withDeadline gives a context without a deadline one: a few of the
// cluster's timeouts, so that no call outlives its usefulness.
func withDeadline(ctx context.Context, c *Cluster) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, 3*c.opts.timeout())
}

func (m *Monitor) lag(ctx context.Context, c *Cluster, pipeline, group string, topics []string, eval EvalOptions) (*LagReport, error) {
	started := time.Now()
	ctx, cancelAll := withDeadline(ctx, c)
	defer cancelAll()
	offCtx, cancel := budget(ctx, 0.7)
	snap, err := c.snapshot(offCtx, group, topics)
	cancel()
	if err != nil {
		return nil, err
	}
	now := m.now()
	r := &LagReport{Cluster: c.Name(), Pipeline: pipeline, Topics: slices.Clone(topics), At: now, Group: snap.group,
		StallAfter: eval.StallAfter, AllowedLag: eval.AllowedLag, Unavailable: snap.unavailable}
	r.Partitions = snap.partitions()
	// A group exists if the coordinator knows it, or it has a commit on
	// the topics; a coordinator that did not answer is no proof it is
	// missing.
	r.GroupExists = !snap.groupKnown || snap.group.State != "Dead"
	for _, p := range r.Partitions {
		r.GroupExists = r.GroupExists || p.Committed >= 0
	}

	// Verdicts and estimated ages, per topic, over stored samples plus
	// this answer.
	live := snap.samples(now)
	byTopic := map[string][]int{}
	for i, p := range r.Partitions {
		byTopic[p.Topic] = append(byTopic[p.Topic], i)
	}
	windows := map[string][]PartitionSample{}
	for _, topic := range topics {
		window := m.window(ctx, r, SampleKey{Cluster: c.Name(), Group: group, Topic: topic})
		windows[topic] = window
		eval.Now = now
		gs := evaluate(window, live[topic], eval)
		if gs.Moved.After(r.CommitsMoved) {
			r.CommitsMoved = gs.Moved
		}
		stored := 0
		for _, ps := range gs.Partitions {
			stored = max(stored, ps.Samples)
		}
		if len(live[topic]) > 0 {
			stored-- // this answer's
		}
		r.History = max(r.History, stored)
		byPartition := make(map[int32]*PartitionStatus, len(gs.Partitions))
		for k := range gs.Partitions {
			byPartition[gs.Partitions[k].Partition] = &gs.Partitions[k]
		}
		for _, i := range byTopic[topic] {
			p := &r.Partitions[i]
			ps, ok := byPartition[p.Partition]
			switch {
			case p.LogEnd < 0 || p.Committed == UnknownOffset || !ok:
				// Stored samples alone would judge the partition
				// as of the last round, not now.
				p.Status = StatusUnknown
				p.Evidence = unknownRule(p)
			default:
				p.Status, p.Evidence = ps.Status, ps.Evidence
				if ps.Age > 0 {
					p.Age, p.AgeSource = ps.Age, AgeEstimated
					if ps.AgeAtLeast {
						p.AgeSource = AgeAtLeast
					}
				}
			}
		}
	}
	m.summarise(r)

	// The exact age of the oldest unconsumed record, for the partitions
	// that lag most.
	if m.timed > 0 {
		tsCtx, cancel := budget(ctx, 0.5)
		m.fetchAges(tsCtx, c, snap, r, now)
		cancel()
	}
	r.Totals = totals(r.Partitions)

	// Commit movement is a scan of the stored windows: only an idle-looking
	// group needs it.
	movements := func() []*CommitMovement {
		var out []*CommitMovement
		for _, topic := range topics {
			out = append(out, movement(windows[topic], live[topic], now))
		}
		return out
	}
	if mm, idle := documentedIdle(r, movements); idle {
		m.checkMismatch(ctx, c, r, snap, mm)
	}
	r.Elapsed = time.Since(started)
	return r, nil
}

func (m *Monitor) window(ctx context.Context, r *LagReport, key SampleKey) []PartitionSample {
	if m.store == nil {
		return nil
	}
	w, err := m.store.Window(ctx, key)
	if err != nil {
		r.Unavailable = append(r.Unavailable, Unavailable{What: PartStoredSamples, Err: fmt.Errorf("read samples of %s: %w", key, err)})
		return nil
	}
	return w
}

// movement sums committed offsets per round to see whether a group's
// commits advanced over the stored window.
func movement(window, live []PartitionSample, now time.Time) *CommitMovement {
	if len(window) == 0 {
		return nil
	}
	type round struct {
		at  int64
		sum int64
	}
	var rounds []round
	for _, part := range [2][]PartitionSample{window, live} {
		for i := range part {
			s := &part[i]
			if len(rounds) == 0 || s.UnixMilli != rounds[len(rounds)-1].at {
				rounds = append(rounds, round{at: s.UnixMilli})
			}
			if s.Committed > 0 {
				rounds[len(rounds)-1].sum += s.Committed
			}
		}
	}
	mv := &CommitMovement{Samples: len(rounds), Span: now.Sub(time.UnixMilli(rounds[0].at)),
		Advanced: rounds[len(rounds)-1].sum - rounds[0].sum}
	for i := len(rounds) - 1; i > 0; i-- {
		if rounds[i].sum != rounds[i-1].sum {
			mv.LastMoved = time.UnixMilli(rounds[i].at)
			break
		}
	}
	return mv
}

// summarise gives the report the worst verdict over all its topics.
func (m *Monitor) summarise(r *LagReport) {
	sum, counts := summarize(r.Partitions)
	if len(r.Topics) <= 1 {
		sum.Worst.Topic = ""
	}
	r.Status, r.Summary, r.StatusCounts = sum.Status, sum, counts
}

// fetchAges fetches, for the partitions that lag most, the record at the
// committed offset: its timestamp is the age of the oldest unconsumed
// record.
func (m *Monitor) fetchAges(ctx context.Context, c *Cluster, snap *groupSnapshot, r *LagReport, now time.Time) {
	var cand []int
	for i, p := range r.Partitions {
		if p.Lag > 0 && snap.refs[i].leader != nil {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return
	}
	sort.Slice(cand, func(a, b int) bool {
		pa, pb := r.Partitions[cand[a]], r.Partitions[cand[b]]
		if pa.Lag != pb.Lag {
			return pa.Lag > pb.Lag
		}
		return cand[a] < cand[b]
	})
	if len(cand) > m.timed {
		cand = cand[:m.timed]
	}
	offsets := make([]int64, len(cand))
	for k, i := range cand {
		offsets[k] = r.Partitions[i].Committed
	}
	times, unavailable := c.recordTimes(ctx, snap.refs, cand, offsets, recordTimeBytes)
	r.Unavailable = append(r.Unavailable, unavailable...)
	for _, i := range cand {
		t, ok := times[i]
		if !ok {
			continue
		}
		p := &r.Partitions[i]
		if t.at.IsZero() {
			p.NoAge, p.AgeNote = t.noTime, t.err
			continue
		}
		p.Age, p.AgeSource = max(now.Sub(t.at), 0), AgeRecord
	}
}

// totals sums a report's partitions: the lag through SumLag, the partitions it could not
// count by why, and the oldest unconsumed record.
func totals(ps []PartitionLag) LagTotals {
	t := LagTotals{Partitions: len(ps)}
	t.Lag, _ = SumLag(ps)
	for _, p := range ps {
		switch {
		case p.LogEnd < 0 || p.Committed == UnknownOffset:
			t.Unknown++
		case p.Committed == NoOffset:
			t.NoCommit++
		}
		if p.Age > t.MaxAge || p.Age == t.MaxAge && p.AgeSource == AgeRecord && t.MaxAgeFrom != AgeRecord && p.Age > 0 {
			t.MaxAge, t.MaxAgeAt, t.MaxAgeFrom = p.Age, TopicPartition{p.Topic, p.Partition}, p.AgeSource
		}
	}
	return t
}

// documentedIdle says whether the documented group looks idle on its topics: missing, empty
// with commits that do not move, stalled or stopped; and if so, why, as the mismatch's data.
func documentedIdle(r *LagReport, movements func() []*CommitMovement) (*Mismatch, bool) {
	mm := &Mismatch{Documented: r.Group.Name}
	switch {
	case !r.GroupExists:
		mm.Reason = IdleMissing
	case r.Status == StatusStalled:
		mm.Reason = IdleStalled
	case r.Status == StatusStopped:
		mm.Reason = IdleStopped
	case r.Totals.NoCommit == r.Totals.Partitions && r.Totals.Partitions > 0 && membersOnTopics(r) == 0:
		mm.Reason = IdleNoCommits
	}
	if mm.Reason != "" {
		return mm, true
	}
	if membersOnTopics(r) > 0 {
		return nil, false
	}
	// No member: the group may still be driven by standalone commits
	// (a Spark job committing from a listener, say). It is idle only if
	// those did not move.
	var advanced int64
	for _, mv := range movements() {
		if mv != nil && mv.Samples > 1 {
			mm.Watched = true
			advanced += mv.Advanced
			mm.Unchanged = max(mm.Unchanged, mv.Span)
		}
	}
	if mm.Watched && advanced != 0 {
		return nil, false
	}
	mm.Reason = IdleEmpty
	return mm, true
}

func membersOnTopics(r *LagReport) int {
	n := 0
	for _, t := range r.Topics {
		n += r.Group.membersOn(t)
	}
	return n
}

// checkMismatch looks for the groups that do consume the report's topics while the documented
// one is idle (mm).
func (m *Monitor) checkMismatch(ctx context.Context, c *Cluster, r *LagReport, snap *groupSnapshot, mm *Mismatch) {
	for _, topic := range r.Topics {
		known := &topicEnds{}
		for i, ref := range snap.refs {
			if ref.topic == topic {
				known.refs = append(known.refs, ref)
				known.logEnd = append(known.logEnd, snap.logEnd[i])
			}
		}
		gr, err := m.topicGroups(ctx, c, topic, known)
		if err != nil {
			r.Unavailable = append(r.Unavailable, Unavailable{What: PartTopicGroups, Of: topic, Err: err})
			continue
		}
		r.Unavailable = append(r.Unavailable, gr.Unavailable...)
		for _, g := range gr.Groups {
			if g.Active && g.Group.Name != r.Group.Name {
				mm.Active = append(mm.Active, g)
			}
		}
	}
	if len(mm.Active) == 0 {
		return
	}
	sort.SliceStable(mm.Active, func(a, b int) bool { return mm.Active[a].Lag > mm.Active[b].Lag })
	r.Mismatch = mm
}
