package commands

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/internal/human"
)

// maxRows is how many partition or group rows a reply's table shows before it sums up the
// rest.
const maxRows = 20

// lagSection lays a lag report out: a headline with the verdict and its evidence, the group,
// the mismatch if any, the worst rows partitions with a count of the rest, totals, and what
// could not be fetched.
func lagSection(r *kafka.LagReport, rows int) Section {
	subject := "group " + r.Group.Name
	if r.Pipeline != "" {
		subject = r.Pipeline + ": " + subject
	}
	head := []string{
		fmt.Sprintf("%s on %s (cluster %s): %s", subject, strings.Join(r.Topics, ", "), r.Cluster, r.Status),
		lagSummaryLine(r.Summary),
		groupLine(r),
	}
	if r.Mismatch != nil {
		head = append(head, "WRONG GROUP? "+MismatchEvidence(r))
	}
	head = append(head, "")

	order := make([]int, len(r.Partitions))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, c int) bool {
		pa, pc := r.Partitions[order[a]], r.Partitions[order[c]]
		if ra, rc := rowRank(pa.Status), rowRank(pc.Status); ra != rc {
			return ra > rc
		}
		if pa.Lag != pc.Lag {
			return pa.Lag > pc.Lag
		}
		return order[a] < order[c]
	})
	shown := order[:min(len(order), rows)]
	multi := len(r.Topics) > 1
	table := &Table{Header: []string{"PART", "LOG END", "COMMITTED", "LAG", "AGE", "STATUS", "MEMBER"},
		Right: []bool{true, true, true, true, true, false, false}}
	if multi {
		table.Header = append([]string{"TOPIC"}, table.Header...)
		table.Right = append([]bool{false}, table.Right...)
	}
	for _, i := range shown {
		p := r.Partitions[i]
		row := []string{strconv.Itoa(int(p.Partition)), offsetCell(p.LogEnd), offsetCell(p.Committed), lagCell(p.Lag),
			ageCell(p.Age, p.AgeSource), p.Status.String(), p.Member}
		if multi {
			row = append([]string{p.Topic}, row...)
		}
		table.Rows = append(table.Rows, row)
	}
	var after []string
	if rest := order[len(shown):]; len(rest) > 0 {
		counts := map[kafka.Status]int{}
		more := make([]kafka.PartitionLag, len(rest))
		for j, i := range rest {
			more[j] = r.Partitions[i]
			counts[r.Partitions[i].Status]++
		}
		lag, _ := kafka.SumLag(more)
		after = append(after, fmt.Sprintf("… %s more %s: lag %s, %s", human.Digits(int64(len(rest))), human.Noun(len(rest), "partition"),
			human.Digits(lag), statusCounts(counts)))
	}
	t := r.Totals
	total := fmt.Sprintf("total: %s, lag %s", human.Count(t.Partitions, "partition"), human.Digits(t.Lag))
	if t.NoCommit > 0 {
		total += fmt.Sprintf(", %d without commit", t.NoCommit)
	}
	if t.Unknown > 0 {
		total += fmt.Sprintf(", %d unknown", t.Unknown)
	}
	if t.MaxAge > 0 {
		total += fmt.Sprintf("; oldest unconsumed %s (%s p%d)", ageCell(t.MaxAge, t.MaxAgeFrom), t.MaxAgeAt.Topic, t.MaxAgeAt.Partition)
	}
	after = append(after, total)
	for _, p := range r.Partitions {
		if note := noAgeLine(p); note != "" {
			after = append(after, fmt.Sprintf("note: %s p%d: %s", p.Topic, p.Partition, note))
		}
	}
	after = append(after, unavailableLines(r.Unavailable)...)
	if r.History > 0 {
		after = append(after, fmt.Sprintf("history: %s; stall_after %s", human.Count(r.History, "stored sample"), human.Age(r.StallAfter)))
	} else {
		after = append(after, "history: none stored yet; the verdict rests on this answer alone")
	}
	return Section{Lines: head, Table: table, After: after, Pre: true}
}

// rowRank orders table rows: problems first, then partitions nothing is known about, then
// healthy ones.
func rowRank(s kafka.Status) int {
	switch s {
	case kafka.StatusOK:
		return 0
	case kafka.StatusUnknown:
		return 1
	}
	return int(s) + 1
}

func groupLine(r *kafka.LagReport) string {
	g := r.Group
	if !r.GroupExists {
		return fmt.Sprintf("group %s does not exist (no members, no commits on these topics)", g.Name)
	}
	state := g.State
	if state == "" {
		state = "state unknown"
	}
	line := fmt.Sprintf("state %s, %s", state, human.Count(len(g.Members), "member"))
	if len(g.Members) == 0 {
		return line
	}
	var ms []string
	for _, m := range g.Members {
		s := m.ClientID
		if m.Host != "" {
			s += " (" + m.Host + ")"
		}
		for _, t := range r.Topics {
			if ps := m.Assigned[t]; len(ps) > 0 {
				if len(r.Topics) > 1 {
					s += " " + t
				}
				s += " p" + partitionRanges(ps)
			}
		}
		ms = append(ms, s)
	}
	const maxMembers = 10
	if len(ms) > maxMembers {
		ms = append(ms[:maxMembers], fmt.Sprintf("… %d more", len(ms)-maxMembers))
	}
	return line + ": " + strings.Join(ms, "; ")
}

// groupsSection lays a groups report out, at most rows groups.
func groupsSection(r *kafka.GroupsReport, rows int) Section {
	s := Section{Pre: true, Lines: []string{fmt.Sprintf("groups on %s (cluster %s): %s, %s, log end total %s", r.Topic, r.Cluster,
		human.Count(len(r.Groups), "group"), human.Count(r.Partitions, "partition"), human.Digits(r.LogEndSum))}}
	if len(r.Groups) == 0 {
		s.Lines = append(s.Lines, "no group has commits on the topic or members assigned to it")
	} else {
		s.Lines = append(s.Lines, "")
		s.Table = &Table{Header: []string{"GROUP", "STATE", "MEMBERS", "ASSIGNED", "COMMITTED", "LAG", "COMMITS", "ACTIVE"},
			Right: []bool{false, false, true, true, true, true, false, false}}
		shown := r.Groups[:min(len(r.Groups), rows)]
		for _, g := range shown {
			lag := "-"
			if g.LagKnown {
				lag = human.Digits(g.Lag)
			}
			moved := "-"
			if mv := g.Movement; mv != nil && mv.Samples > 1 {
				moved = fmt.Sprintf("+%s in %s", human.Digits(mv.Advanced), human.Age(mv.Span))
			}
			active := "no"
			if g.Active {
				active = "yes: " + activeReason(g)
			}
			name := g.Group.Name
			if g.Spark {
				name += " (spark)"
			}
			state := g.Group.State
			if state == "" {
				state = "?"
			}
			s.Table.Rows = append(s.Table.Rows, []string{name, state, strconv.Itoa(g.Members), strconv.Itoa(g.Assigned),
				fmt.Sprintf("%d/%d", g.Committed, r.Partitions), lag, moved, active})
		}
		if rest := len(r.Groups) - len(shown); rest > 0 {
			s.After = append(s.After, fmt.Sprintf("… %d more %s", rest, human.Noun(rest, "group")))
		}
	}
	s.After = append(s.After, unavailableLines(r.Unavailable)...)
	return s
}

// MismatchEvidence words a lag report's wrong-group finding in one line (the lag reply's
// WRONG GROUP? line, and a verdict's pipeline.FactGroupIdle): why
// the documented group counts as idle, the group that consumes most, and how many more do.
// "" without a finding.
func MismatchEvidence(r *kafka.LagReport) string {
	mm := r.Mismatch
	if mm == nil || len(mm.Active) == 0 {
		return ""
	}
	g := mm.Active[0]
	s := fmt.Sprintf("documented group %s is %s (%s) while %s consumes %s: %s", mm.Documented, mm.Reason, idleDetail(r),
		g.Group.Name, g.Topic, activity(g))
	if len(mm.Active) > 1 {
		s += fmt.Sprintf("; %s more", human.Count(len(mm.Active)-1, "active group"))
	}
	return s
}

// idleDetail says why the documented group counts as idle, from the mismatch's reason and the
// report's group, cluster, topics and verdict.
func idleDetail(r *kafka.LagReport) string {
	mm := r.Mismatch
	topics := strings.Join(r.Topics, ", ")
	switch mm.Reason {
	case kafka.IdleMissing:
		return fmt.Sprintf("no group %s on cluster %s: no members, no commits on %s", mm.Documented, r.Cluster, topics)
	case kafka.IdleStalled, kafka.IdleStopped:
		return lagSummaryLine(r.Summary)
	case kafka.IdleNoCommits:
		return fmt.Sprintf("no member on %s and no commits", topics)
	case kafka.IdleEmpty:
		state := r.Group.State
		if state == "" {
			state = "unknown state"
		}
		if !mm.Watched {
			return fmt.Sprintf("%s, no member on %s, no stored samples to show commits moving", state, topics)
		}
		return fmt.Sprintf("%s, no member on %s, commits unchanged over %s", state, topics, human.Age(mm.Unchanged))
	}
	return string(mm.Reason)
}

// activity is what a consuming group does on the topic: its members, how far its commits
// advanced over the stored samples, its lag.
func activity(g kafka.TopicGroup) string {
	var parts []string
	if g.Members > 0 {
		parts = append(parts, human.Count(g.Members, "member"))
	}
	if g.Movement != nil && g.Movement.Advanced > 0 {
		parts = append(parts, fmt.Sprintf("commits +%s in %s", human.Digits(g.Movement.Advanced), human.Age(g.Movement.Span)))
	}
	if g.LagKnown {
		parts = append(parts, "lag "+human.Digits(g.Lag))
	} else {
		parts = append(parts, "lag unknown (no commits)")
	}
	return strings.Join(parts, ", ")
}

// activeReason says what makes a group active on the topic (the groups reply's ACTIVE column).
func activeReason(g kafka.TopicGroup) string {
	switch g.ActiveBy {
	case kafka.ActiveMembers:
		return fmt.Sprintf("%s on the topic (%s)", human.Count(g.Members, "member"), g.Group.State)
	case kafka.ActiveCommits:
		if mv := g.Movement; mv != nil {
			return fmt.Sprintf("commits advanced %s in %s", human.Digits(mv.Advanced), human.Age(mv.Span))
		}
	}
	return string(g.ActiveBy)
}

// partWords names a part of a Kafka answer (kafka.Unavailable's What and Of): "log end
// offsets", "groups coordinated by broker 2 (10.0.0.9:9092)". A part it does not know is shown
// as it is: an earlier version stored the words themselves in a verdict's facts.
func partWords(what kafka.Part, of string) string {
	switch what {
	case kafka.PartLogStarts:
		return "log start offsets"
	case kafka.PartLogEnds:
		return "log end offsets"
	case kafka.PartCommitted:
		return "committed offsets"
	case kafka.PartGroupState:
		return "group state"
	case kafka.PartGroupStates:
		return "group states"
	case kafka.PartGroupCommits:
		return "group commits"
	case kafka.PartCoordinated:
		return "groups coordinated by " + of
	case kafka.PartTopicGroups:
		return "groups on " + of
	case kafka.PartRecordTimes:
		return "record timestamps"
	case kafka.PartStoredSamples:
		return "stored samples"
	}
	return string(what)
}

// noAgeLine says why a partition's exact age is missing: the reason's words, the broker's
// error, or an earlier version's words; "" when nothing is missing.
func noAgeLine(p kafka.PartitionLag) string {
	switch p.NoAge {
	case kafka.NoTimeNoPartition:
		return "partition missing from the fetch answer"
	case kafka.NoTimeOutOfRange:
		return "committed offset is outside the log (deleted by retention?)"
	case kafka.NoTimeNoRecord:
		return "no record at the committed offset in the fetch answer"
	case "", kafka.NoTimeBrokerError:
		return p.AgeNote
	}
	return string(p.NoAge)
}

// commitRefusalWords says why a group refused streamwatch's standalone commit.
func commitRefusalWords(r kafka.CommitRefusal) string {
	switch r {
	case kafka.RefusedLiveMembers:
		return "the group has live members"
	case kafka.RefusedNotAuthorized:
		return "not authorized"
	}
	return string(r)
}

func unavailableLines(us []kafka.Unavailable) []string {
	var out []string
	for _, u := range us {
		l := "unknown " + partWords(u.What, u.Of)
		if len(u.Partitions) > 0 {
			l += " of " + topicPartitions(u.Partitions)
		}
		out = append(out, fmt.Sprintf("%s: %v", l, u.Err))
	}
	return out
}

// topicPartitions names partitions compactly: "orders p0-3,7".
func topicPartitions(tps []kafka.TopicPartition) string {
	var parts []string
	for i := 0; i < len(tps); {
		j := i
		var ps []int32
		for j < len(tps) && tps[j].Topic == tps[i].Topic {
			ps = append(ps, tps[j].Partition)
			j++
		}
		parts = append(parts, tps[i].Topic+" p"+partitionRanges(ps))
		i = j
	}
	return strings.Join(parts, ", ")
}

// partitionRanges writes sorted partitions as ranges: 0-5,8,10-11.
func partitionRanges(ps []int32) string {
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(ps[i])))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(ps[j])))
		}
		i = j + 1
	}
	return b.String()
}

func statusCounts(counts map[kafka.Status]int) string {
	var parts []string
	for st := kafka.StatusStopped; st >= kafka.StatusUnknown; st-- {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", human.Digits(int64(n)), st))
		}
	}
	return strings.Join(parts, ", ")
}

func offsetCell(o int64) string {
	switch o {
	case kafka.NoOffset:
		return "none"
	case kafka.UnknownOffset:
		return "?"
	}
	return human.Digits(o)
}

func lagCell(l int64) string {
	if l < 0 {
		return "-"
	}
	return human.Digits(l)
}

func ageCell(d time.Duration, src kafka.AgeSource) string {
	age := human.Age(d)
	switch src {
	case kafka.AgeRecord:
		return age
	case kafka.AgeEstimated:
		return "~" + age
	case kafka.AgeAtLeast:
		return "≥" + age
	}
	return "-"
}

// lagUsage refuses a `lag` that names neither a pipeline nor a group and a topic.
func lagUsage(usages []string) error {
	return &UsageError{Msg: "lag takes a pipeline, or a group and a topic", Usages: usages}
}

// groupsUsage refuses a `groups` that names not one topic.
func groupsUsage(usages []string) error {
	return &UsageError{Msg: "groups takes one topic", Usages: usages}
}

// groupsReply is the `groups` reply: how many groups consume topic, then the table.
func groupsReply(topic string, r *kafka.GroupsReport) Reply {
	return Reply{Text: fmt.Sprintf("%d group(s) on %s", len(r.Groups), topic),
		Sections: []Section{groupsSection(r, maxRows)}}
}

// lagReply is the `lag` reply: the group's status and lag in one line (or that it has no
// commits and no members: err is kafka.ErrUnknownGroup), then the table.
func lagReply(r *kafka.LagReport, err error) Reply {
	who := r.Group.Name
	if r.Pipeline != "" {
		who = r.Pipeline + " (group " + r.Group.Name + ")"
	}
	text := fmt.Sprintf("%s: %s, lag %d records on %d partitions", who, r.Status, r.Totals.Lag, r.Totals.Partitions)
	if r.Mismatch != nil {
		text += "; wrong group? " + string(r.Mismatch.Reason)
	}
	if errors.Is(err, kafka.ErrUnknownGroup) {
		text = fmt.Sprintf("Group %s has no commits and no members on %s.", r.Group.Name, strings.Join(r.Topics, ", "))
	}
	return Reply{Text: text, Sections: []Section{lagSection(r, maxRows)}}
}
