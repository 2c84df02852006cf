package kafka

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// This file holds the batched requests: one ListOffsets per partition
// leader, one OffsetFetch and one DescribeGroups per group coordinator, one
// ListGroups per broker and one Fetch per leader for record timestamps,
// whatever the partition count.

// call is one request to one broker, run on its own goroutine. run writes
// only to variables it owns; runCalls reads nothing of a call that did not
// finish before the context ended.
type call struct {
	broker  *sarama.Broker
	op      string
	started time.Time
	run     func() error
	err     error
}

// runCalls runs calls in parallel and reports which finished before ctx
// ended.
func runCalls(ctx context.Context, calls []*call) []bool {
	finished := make([]bool, len(calls))
	if len(calls) == 0 {
		return finished
	}
	ch := make(chan int, len(calls))
	for i, c := range calls {
		c.started = time.Now()
		go func() {
			c.err = c.run()
			// sarama's Broker.Open marks a broker opened before it takes the lock that
			// requests wait on for the connection: a request racing another goroutine's Open
			// (the client's own, for a leader) can find no connection yet. Wait for the dial
			// under way (Connected takes that lock) and ask again, twice at most.
			for range 3 {
				if c.broker == nil || !errors.Is(c.err, sarama.ErrNotConnected) {
					break
				}
				runtime.Gosched()
				ok, err := c.broker.Connected()
				if err != nil {
					break // the dial failed: the broker is not there
				}
				if ok {
					c.err = c.run()
				}
			}
			ch <- i
		}()
	}
	for range calls {
		select {
		case i := <-ch:
			finished[i] = true
		case <-ctx.Done():
			return finished
		}
	}
	return finished
}

// callErr is the error of calls[i]: its own, or the context's when it did
// not finish.
func (c *Cluster) callErr(ctx context.Context, cl *call, finished bool) error {
	if !finished {
		err := ctx.Err()
		if err == nil {
			err = context.DeadlineExceeded
		}
		return c.brokerError(cl.broker, cl.op, cl.started, err)
	}
	if cl.err == nil {
		return nil
	}
	var be *BrokerError
	if errors.As(cl.err, &be) {
		return be
	}
	return c.brokerError(cl.broker, cl.op, cl.started, cl.err)
}

// openBroker makes sure b has a connection attempt under way; sarama's
// request methods then wait for it.
func (c *Cluster) openBroker(b *sarama.Broker) {
	_ = b.Open(c.cfg) // ErrAlreadyConnected is the common, harmless answer
}

// retriableLeaderError says a partition's leader moved and metadata should
// be refreshed.
func retriableLeaderError(err error) bool {
	return errors.Is(err, sarama.ErrNotLeaderForPartition) || errors.Is(err, sarama.ErrLeaderNotAvailable) ||
		errors.Is(err, sarama.ErrUnknownTopicOrPartition) || errors.Is(err, sarama.ErrFencedLeaderEpoch) ||
		errors.Is(err, sarama.ErrUnknownLeaderEpoch) || errors.Is(err, sarama.ErrOffsetNotAvailable)
}

func retriableCoordinatorError(err error) bool {
	return errors.Is(err, sarama.ErrNotCoordinatorForConsumer) || errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable) ||
		errors.Is(err, sarama.ErrOffsetsLoadInProgress)
}

// logEnds fills ends[i] with the high watermark of refs[i] for every index
// in want, with one ListOffsets request per leader. Partitions whose leader
// moved are retried once after a metadata refresh. answered counts the
// requests that were answered.
func (c *Cluster) logEnds(ctx context.Context, cl sarama.Client, refs []partitionRef, want []int, ends []int64) (unavailable []Unavailable, answered int) {
	return c.listOffsets(ctx, cl, refs, want, ends, sarama.OffsetNewest)
}

// listOffsets is logEnds for any ListOffsets timestamp: sarama.OffsetNewest for the log ends,
// sarama.OffsetOldest for the log starts (the earliest offsets retention has left).
func (c *Cluster) listOffsets(ctx context.Context, cl sarama.Client, refs []partitionRef, want []int, ends []int64, at int64) (unavailable []Unavailable, answered int) {
	what := offsetsWhat(at)
	unavailable, retry, answered := c.listOffsetsRound(ctx, refs, want, ends, at, true)
	if len(retry) == 0 || ctx.Err() != nil {
		return unavailable, answered
	}
	topics := map[string]bool{}
	for _, i := range retry {
		topics[refs[i].topic] = true
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	leaders, err := await(ctx, func() ([]*sarama.Broker, error) {
		err := cl.RefreshMetadata(names...)
		leaders := make([]*sarama.Broker, len(retry))
		for k, i := range retry {
			if b, lerr := cl.Leader(refs[i].topic, refs[i].partition); lerr == nil {
				leaders[k] = b
			}
		}
		return leaders, err
	})
	if leaders == nil {
		return append(unavailable, Unavailable{What: what, Partitions: tps(refs, retry),
			Err: c.clusterError(fmt.Errorf("refresh metadata after leaders moved: %w", err), 0)}), answered
	}
	for k, i := range retry {
		refs[i].leader = leaders[k]
	}
	more, _, n := c.listOffsetsRound(ctx, refs, retry, ends, at, false)
	return append(unavailable, more...), answered + n
}

// offsetsWhat names what a ListOffsets at that timestamp reads, for Unavailable.
func offsetsWhat(at int64) Part {
	if at == sarama.OffsetOldest {
		return PartLogStarts
	}
	return PartLogEnds
}

// listOffsetsRound is one round of listOffsets. With mayRetry, partitions whose
// leader moved (or that have none) are returned in retry instead of being
// reported.
func (c *Cluster) listOffsetsRound(ctx context.Context, refs []partitionRef, want []int, ends []int64, at int64, mayRetry bool) (unavailable []Unavailable, retry []int, answered int) {
	what := offsetsWhat(at)
	byLeader := make(map[*sarama.Broker][]int)
	var leaderless []int
	for _, i := range want {
		if refs[i].leader == nil {
			leaderless = append(leaderless, i)
			continue
		}
		byLeader[refs[i].leader] = append(byLeader[refs[i].leader], i)
	}
	if len(leaderless) > 0 {
		if mayRetry {
			retry = append(retry, leaderless...)
		} else {
			unavailable = append(unavailable, Unavailable{What: what, Partitions: tps(refs, leaderless),
				Err: fmt.Errorf("cluster %s: the partitions have no leader", c.opts.Name)})
		}
	}
	type answer struct {
		idx  []int
		ends []int64
		perr []error
	}
	calls := make([]*call, 0, len(byLeader))
	answers := make([]*answer, 0, len(byLeader))
	for b, idx := range byLeader {
		a := &answer{idx: idx}
		answers = append(answers, a)
		c.openBroker(b)
		calls = append(calls, &call{broker: b, op: "ListOffsets", run: func() error {
			req := sarama.NewOffsetRequest(c.cfg.Version)
			for _, i := range idx {
				req.AddBlock(refs[i].topic, refs[i].partition, at, 1)
			}
			resp, err := b.GetAvailableOffsets(req)
			if err != nil {
				return err
			}
			a.ends = make([]int64, len(idx))
			a.perr = make([]error, len(idx))
			for k, i := range idx {
				a.ends[k] = UnknownOffset
				block := resp.GetBlock(refs[i].topic, refs[i].partition)
				switch {
				case block == nil:
					a.perr[k] = errors.New("partition missing from the answer")
				case !errors.Is(block.Err, sarama.ErrNoError):
					a.perr[k] = block.Err
				case req.Version == 0 && len(block.Offsets) > 0:
					a.ends[k] = block.Offsets[0]
				default:
					a.ends[k] = block.Offset
				}
			}
			return nil
		}})
	}
	finished := runCalls(ctx, calls)
	for k, cl := range calls {
		a := answers[k]
		if err := c.callErr(ctx, cl, finished[k]); err != nil {
			unavailable = append(unavailable, Unavailable{What: what, Partitions: tps(refs, a.idx), Err: err})
			continue
		}
		answered++
		failed := map[string][]int{}
		for j, i := range a.idx {
			ends[i] = a.ends[j]
			perr := a.perr[j]
			switch {
			case perr == nil:
			case mayRetry && retriableLeaderError(perr):
				retry = append(retry, i)
			default:
				failed[perr.Error()] = append(failed[perr.Error()], i)
			}
		}
		for msg, idx := range failed {
			unavailable = append(unavailable, Unavailable{What: what, Partitions: tps(refs, idx),
				Err: c.brokerError(cl.broker, cl.op, cl.started, errors.New(msg))})
		}
	}
	return unavailable, retry, answered
}

func tps(refs []partitionRef, idx []int) []TopicPartition {
	out := make([]TopicPartition, len(idx))
	for k, i := range idx {
		out[k] = TopicPartition{Topic: refs[i].topic, Partition: refs[i].partition}
	}
	sortTPs(out)
	return out
}

func sortTPs(out []TopicPartition) {
	sort.Slice(out, func(a, b int) bool {
		if out[a].Topic != out[b].Topic {
			return out[a].Topic < out[b].Topic
		}
		return out[a].Partition < out[b].Partition
	})
}

// commits maps topic → partition → committed offset; partitions without a
// commit are absent.
type commits map[string]map[int32]int64

func (c *Cluster) offsetFetchVersionAllTopics() bool {
	return requestVersion(apiOffsetFetch, c.cfg.Version) >= 2
}

// newOffsetFetch builds the OffsetFetch of one group. With a broker that
// accepts a null topic list, it asks for all of the group's commits (one
// small request whatever the partition count) and the caller filters.
func (c *Cluster) newOffsetFetch(group string, topics map[string][]int32) *sarama.OffsetFetchRequest {
	if c.offsetFetchVersionAllTopics() {
		return sarama.NewOffsetFetchRequest(c.cfg.Version, group, nil)
	}
	return sarama.NewOffsetFetchRequest(c.cfg.Version, group, topics)
}

// readCommits extracts one group's commits on the wanted topics from an
// OffsetFetch answer. GROUP_ID_NOT_FOUND means no commits: kfake answers so
// for unknown groups where real brokers answer with offsets of -1.
func readCommits(groupErr sarama.KError, blocks map[string]map[int32]*sarama.OffsetFetchResponseBlock, wanted map[string]bool) (commits, error) {
	switch {
	case errors.Is(groupErr, sarama.ErrNoError), errors.Is(groupErr, sarama.ErrGroupIDNotFound):
	default:
		return nil, groupErr
	}
	out := commits{}
	for topic, parts := range blocks {
		if !wanted[topic] {
			continue
		}
		m := make(map[int32]int64, len(parts))
		for p, b := range parts {
			if b == nil || !errors.Is(b.Err, sarama.ErrNoError) || b.Offset < 0 {
				continue
			}
			m[p] = b.Offset
		}
		out[topic] = m
	}
	return out, nil
}

// fetchCommits asks coordinator for group's commits on topics.
func (c *Cluster) fetchCommits(coordinator *sarama.Broker, group string, topicParts map[string][]int32) (commits, error) {
	req := c.newOffsetFetch(group, topicParts)
	resp, err := coordinator.FetchOffset(req)
	if err != nil {
		return nil, err
	}
	wanted := make(map[string]bool, len(topicParts))
	for t := range topicParts {
		wanted[t] = true
	}
	if resp.Version >= 8 {
		g := resp.GetGroup(group)
		if g == nil {
			return commits{}, nil
		}
		return readCommits(g.Err, g.Blocks, wanted)
	}
	return readCommits(resp.Err, resp.Blocks, wanted)
}

func (c *Cluster) describeGroupsRequest(groups []string) *sarama.DescribeGroupsRequest {
	return &sarama.DescribeGroupsRequest{Groups: groups, Version: requestVersion(apiDescribeGroups, c.cfg.Version)}
}

// describeGroups asks one coordinator about groups.
func (c *Cluster) describeGroups(coordinator *sarama.Broker, groups []string) (map[string]GroupInfo, error) {
	resp, err := coordinator.DescribeGroups(c.describeGroupsRequest(groups))
	if err != nil {
		return nil, err
	}
	out := make(map[string]GroupInfo, len(resp.Groups))
	for _, g := range resp.Groups {
		if g == nil {
			continue
		}
		info := GroupInfo{Name: g.GroupId, State: g.State, ProtocolType: g.ProtocolType, Protocol: g.Protocol,
			Coordinator: brokerOf(coordinator)}
		switch {
		case errors.Is(g.Err, sarama.ErrNoError):
		case errors.Is(g.Err, sarama.ErrGroupIDNotFound):
			info.State = "Dead"
		case retriableCoordinatorError(g.Err):
			return nil, g.Err
		default:
			return nil, fmt.Errorf("describe group %s: %w", g.GroupId, g.Err)
		}
		for _, m := range g.Members {
			info.Members = append(info.Members, member(g.ProtocolType, m))
		}
		sort.Slice(info.Members, func(a, b int) bool {
			ma, mb := info.Members[a], info.Members[b]
			if ma.ClientID != mb.ClientID {
				return ma.ClientID < mb.ClientID
			}
			return ma.ID < mb.ID
		})
		out[g.GroupId] = info
	}
	return out, nil
}

func member(protocolType string, m *sarama.GroupMemberDescription) Member {
	out := Member{ID: m.MemberId, ClientID: m.ClientId, Host: strings.TrimPrefix(m.ClientHost, "/")}
	if m.GroupInstanceId != nil {
		out.InstanceID = *m.GroupInstanceId
	}
	// Only the consumer protocol's assignment format is known; Connect
	// and others are listed without partitions.
	if protocolType != "consumer" {
		return out
	}
	if a, err := m.GetMemberAssignment(); err == nil && a != nil && len(a.Topics) > 0 {
		out.Assigned = make(map[string][]int32, len(a.Topics))
		for t, ps := range a.Topics {
			ps = slices.Clone(ps)
			slices.Sort(ps)
			out.Assigned[t] = ps
		}
	}
	if md, err := m.GetMemberMetadata(); err == nil && md != nil {
		out.Subscribed = slices.Clone(md.Topics)
		slices.Sort(out.Subscribed)
	}
	return out
}

// coordinator finds group's coordinator, within ctx.
func (c *Cluster) coordinator(ctx context.Context, cl sarama.Client, group string, refresh bool) (*sarama.Broker, error) {
	started := time.Now()
	b, err := await(ctx, func() (*sarama.Broker, error) {
		if refresh {
			if err := cl.RefreshCoordinator(group); err != nil {
				return nil, err
			}
		}
		return cl.Coordinator(group)
	})
	if err != nil {
		return nil, c.clusterError(fmt.Errorf("find the coordinator of group %s: %w", group, err), time.Since(started))
	}
	c.openBroker(b)
	return b, nil
}

func (c *Cluster) listGroupsRequest() *sarama.ListGroupsRequest {
	return &sarama.ListGroupsRequest{Version: requestVersion(apiListGroups, c.cfg.Version)}
}

func (c *Cluster) fetchRequest() *sarama.FetchRequest {
	req := &sarama.FetchRequest{MinBytes: 1, MaxWaitTime: 0, Isolation: sarama.ReadUncommitted,
		Version: requestVersion(apiFetch, c.cfg.Version)}
	if req.Version >= 7 {
		req.SessionID = 0
		req.SessionEpoch = -1
	}
	return req
}

// recordTimeBytes is how much of each partition a timestamp fetch asks for:
// enough for the batch holding the committed offset in most topics. A
// larger first batch is still returned whole by the broker (KIP-74).
const recordTimeBytes = 64 << 10

type recordTime struct {
	at     time.Time
	noTime NoTime // why there is no time
	err    string // the broker's error for NoTimeBrokerError
}

// recordTimes fetches the timestamp of the record at offsets[i] of
// refs[want[i]], with one Fetch request per leader, asking each partition
// for at most perPartition bytes.
func (c *Cluster) recordTimes(ctx context.Context, refs []partitionRef, want []int, offsets []int64, perPartition int32) (map[int]recordTime, []Unavailable) {
	byLeader := map[*sarama.Broker][]int{}
	for k, i := range want {
		if refs[i].leader != nil {
			byLeader[refs[i].leader] = append(byLeader[refs[i].leader], k)
		}
	}
	type answer struct {
		ks    []int
		times map[int]recordTime
	}
	var calls []*call
	var answers []*answer
	for b, ks := range byLeader {
		a := &answer{ks: ks}
		answers = append(answers, a)
		calls = append(calls, &call{broker: b, op: "Fetch", run: func() error {
			req := c.fetchRequest()
			req.MaxBytes = int32(len(ks)) * perPartition
			for _, k := range ks {
				ref := refs[want[k]]
				req.AddBlock(ref.topic, ref.partition, offsets[k], perPartition, -1)
			}
			resp, err := b.Fetch(req)
			if err != nil {
				return err
			}
			a.times = make(map[int]recordTime, len(ks))
			for _, k := range ks {
				ref := refs[want[k]]
				a.times[want[k]] = timeAt(resp.GetBlock(ref.topic, ref.partition), offsets[k])
			}
			return nil
		}})
	}
	finished := runCalls(ctx, calls)
	out := map[int]recordTime{}
	var unavailable []Unavailable
	for k, cl := range calls {
		if err := c.callErr(ctx, cl, finished[k]); err != nil {
			idx := make([]int, len(answers[k].ks))
			for j, kk := range answers[k].ks {
				idx[j] = want[kk]
			}
			unavailable = append(unavailable, Unavailable{What: PartRecordTimes, Partitions: tps(refs, idx), Err: err})
			continue
		}
		for i, t := range answers[k].times {
			out[i] = t
		}
	}
	return out, unavailable
}

// timeAt finds the timestamp of the first record at or after offset in a
// fetch answer.
func timeAt(block *sarama.FetchResponseBlock, offset int64) recordTime {
	switch {
	case block == nil:
		return recordTime{noTime: NoTimeNoPartition}
	case errors.Is(block.Err, sarama.ErrOffsetOutOfRange):
		return recordTime{noTime: NoTimeOutOfRange}
	case !errors.Is(block.Err, sarama.ErrNoError):
		return recordTime{noTime: NoTimeBrokerError, err: block.Err.Error()}
	}
	for _, rs := range block.RecordsSet {
		if rs == nil {
			continue
		}
		if rb := rs.RecordBatch; rb != nil {
			if rb.Control {
				continue
			}
			for _, r := range rb.Records {
				if rb.FirstOffset+r.OffsetDelta < offset {
					continue
				}
				if rb.LogAppendTime {
					return recordTime{at: rb.MaxTimestamp}
				}
				return recordTime{at: rb.FirstTimestamp.Add(r.TimestampDelta)}
			}
			if len(rb.Records) == 0 && rb.PartialTrailingRecord && rb.FirstOffset+int64(rb.LastOffsetDelta) >= offset &&
				!rb.FirstTimestamp.IsZero() {
				// Truncated batch: its first timestamp bounds the record's.
				return recordTime{at: rb.FirstTimestamp}
			}
		}
		if ms := rs.MsgSet; ms != nil {
			for _, mb := range ms.Messages {
				if mb.Offset >= offset && mb.Msg != nil {
					return recordTime{at: mb.Msg.Timestamp}
				}
			}
		}
	}
	return recordTime{noTime: NoTimeNoRecord}
}
