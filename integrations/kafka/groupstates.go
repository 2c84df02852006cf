package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"
)

// groupStates is what the coordinators said about some groups: their descriptions and their
// commits on the wanted topics.
type groupStates struct {
	infos   map[string]GroupInfo
	commits map[string]commits // absent: the commits are unknown
	// moved are the groups whose coordinator said it no longer coordinates them; the caller
	// may find the new one and ask again.
	moved       []string
	unavailable []Unavailable
	answered    int // requests answered
	requests    int // requests sent
}

// fetchGroupStates asks each coordinator about the groups it coordinates: one DescribeGroups
// for all of them, and one OffsetFetch for all of them when the cluster's version is at least
// 3.0.0 (OffsetFetch v8, KIP-709). A broker that answers with an older version (sarama lowers
// the request to the broker's newest, which holds one group), or refuses v8, is asked again with
// one OffsetFetch per group. wanted names the topics whose commits are kept.
func (c *Cluster) fetchGroupStates(ctx context.Context, byCoord map[*sarama.Broker][]string, wanted map[string]bool) groupStates {
	gs := groupStates{infos: map[string]GroupInfo{}, commits: map[string]commits{}}
	batched := requestVersion(apiOffsetFetch, c.cfg.Version) >= 8
	type answer struct {
		groups  []string
		infos   map[string]GroupInfo
		commits map[string]commits
		moved   []string
		// older is set when the coordinator cannot answer for several groups at once.
		older bool
	}
	var calls []*call
	var answers []*answer
	perGroup := func(coord *sarama.Broker, g string, into *[]*call, intoAnswers *[]*answer) {
		a := &answer{groups: []string{g}}
		*intoAnswers = append(*intoAnswers, a)
		*into = append(*into, &call{broker: coord, op: "OffsetFetch", run: func() error {
			cm, err := c.fetchCommits(coord, g, wantedTopics(wanted))
			if err != nil {
				if retriableCoordinatorError(err) {
					a.moved = []string{g}
					return nil
				}
				return err
			}
			a.commits = map[string]commits{g: cm}
			return nil
		}})
	}
	for coord, groups := range byCoord {
		c.openBroker(coord)
		d := &answer{groups: groups}
		answers = append(answers, d)
		calls = append(calls, &call{broker: coord, op: "DescribeGroups", run: func() error {
			infos, err := c.describeGroups(coord, groups)
			if err != nil {
				if retriableCoordinatorError(err) {
					d.moved = groups
					return nil
				}
				return err
			}
			d.infos = infos
			return nil
		}})
		if !batched || c.fetchesSingly(coord) {
			for _, g := range groups {
				perGroup(coord, g, &calls, &answers)
			}
			continue
		}
		f := &answer{groups: groups}
		answers = append(answers, f)
		calls = append(calls, &call{broker: coord, op: "OffsetFetch", run: func() error {
			req := sarama.NewOffsetFetchRequest(c.cfg.Version, "", nil)
			req.Groups = make([]sarama.OffsetFetchRequestGroup, len(groups))
			for i, g := range groups {
				req.Groups[i] = sarama.OffsetFetchRequestGroup{GroupId: g} // nil partitions: all of the group's commits
			}
			resp, err := coord.FetchOffset(req)
			var encErr sarama.PacketEncodingError
			switch {
			case errors.Is(err, sarama.ErrUnsupportedVersion), errors.As(err, &encErr):
				f.older = true
				return nil
			case err != nil:
				return err
			case req.Version < 8 || resp.Version < 8:
				// sarama lowered the request to what the broker advertises: a single-group
				// version that asked about group "". Nothing of it is ours.
				f.older = true
				return nil
			}
			f.commits = map[string]commits{}
			for _, g := range resp.Groups {
				if retriableCoordinatorError(g.Err) {
					f.moved = append(f.moved, g.GroupId)
					continue
				}
				if cm, err := readCommits(g.Err, g.Blocks, wanted); err == nil {
					f.commits[g.GroupId] = cm
				}
			}
			return nil
		}})
	}
	collect := func(calls []*call, answers []*answer, finished []bool) (older []*call) {
		for i, cl := range calls {
			gs.requests++
			a := answers[i]
			if err := c.callErr(ctx, cl, finished[i]); err != nil {
				what := PartGroupStates
				if cl.op == "OffsetFetch" {
					what = PartGroupCommits
				}
				gs.unavailable = append(gs.unavailable, Unavailable{What: what, Err: err, groups: a.groups})
				continue
			}
			gs.answered++
			if a.older {
				older = append(older, cl)
				continue
			}
			gs.moved = append(gs.moved, a.moved...)
			for g, info := range a.infos {
				gs.infos[g] = info
			}
			for g, cm := range a.commits {
				gs.commits[g] = cm
			}
		}
		return older
	}
	older := collect(calls, answers, runCalls(ctx, calls))
	if len(older) == 0 || ctx.Err() != nil {
		return gs
	}
	var fc []*call
	var fa []*answer
	for _, cl := range older {
		c.setFetchesSingly(cl.broker)
		for _, g := range byCoord[cl.broker] {
			perGroup(cl.broker, g, &fc, &fa)
		}
	}
	collect(fc, fa, runCalls(ctx, fc))
	return gs
}

// fetchesSingly says whether b is known to answer OffsetFetch for one group at a time.
func (c *Cluster) fetchesSingly(b *sarama.Broker) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.singleFetch[b.ID()]
}

func (c *Cluster) setFetchesSingly(b *sarama.Broker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.singleFetch == nil {
		c.singleFetch = map[int32]bool{}
	}
	c.singleFetch[b.ID()] = true
}

// wantedTopics is the topic list of an OffsetFetch that names its topics (versions before
// 0.10.2 cannot ask for all of a group's commits): every partition of each topic.
func wantedTopics(wanted map[string]bool) map[string][]int32 {
	out := make(map[string][]int32, len(wanted))
	for t := range wanted {
		out[t] = nil
	}
	return out
}

// coordinators finds the coordinator of each group, at most 8 lookups at a time (the client
// caches them: only a group seen for the first time, or whose coordinator moved, costs a
// FindCoordinator request). Groups whose coordinator cannot be found are returned apart.
func (c *Cluster) coordinators(ctx context.Context, cl sarama.Client, groups []string, refresh bool) (map[*sarama.Broker][]string, map[string]error) {
	type found struct {
		b   *sarama.Broker
		err error
	}
	res := make([]found, len(groups))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, g := range groups {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			b, err := c.coordinator(ctx, cl, g, refresh)
			res[i] = found{b, err}
		})
	}
	wg.Wait()
	byCoord := map[*sarama.Broker][]string{}
	failed := map[string]error{}
	for i, g := range groups {
		if res[i].err != nil {
			failed[g] = res[i].err
			continue
		}
		byCoord[res[i].b] = append(byCoord[res[i].b], g)
	}
	return byCoord, failed
}

// groupStatesOf describes groups and fetches their commits on the wanted topics, finding their
// coordinators first and asking once more the groups whose coordinator moved.
func (c *Cluster) groupStatesOf(ctx context.Context, cl sarama.Client, groups []string, wanted map[string]bool) groupStates {
	byCoord, failed := c.coordinators(ctx, cl, groups, false)
	gs := c.fetchGroupStates(ctx, byCoord, wanted)
	if len(gs.moved) > 0 && ctx.Err() == nil {
		again, failedAgain := c.coordinators(ctx, cl, gs.moved, true)
		for g, err := range failedAgain {
			failed[g] = err
		}
		more := c.fetchGroupStates(ctx, again, wanted)
		for g, info := range more.infos {
			gs.infos[g] = info
		}
		for g, cm := range more.commits {
			gs.commits[g] = cm
		}
		gs.unavailable = append(gs.unavailable, more.unavailable...)
		gs.answered += more.answered
		gs.requests += more.requests
		for _, g := range more.moved {
			failed[g] = fmt.Errorf("cluster %s: the coordinator of group %s moved twice during the round", c.opts.Name, g)
		}
	}
	for _, g := range groups {
		if err, ok := failed[g]; ok {
			gs.unavailable = append(gs.unavailable,
				Unavailable{What: PartCommitted, Err: err, groups: []string{g}},
				Unavailable{What: PartGroupState, Err: err, groups: []string{g}})
		}
	}
	return gs
}
