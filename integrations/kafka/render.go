package kafka

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultMaxRows is how many partition or group rows a rendered table shows
// before it summarises the rest.
const DefaultMaxRows = 20

// FormatLag renders a lag report as plain text: a headline with the
// verdict and its evidence, the group, the mismatch if any, the worst
// maxRows partitions (0 means DefaultMaxRows) with a count of the rest,
// totals, and what could not be fetched. It suits a Slack code block.
func FormatLag(r *LagReport, maxRows int) string {
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	var b strings.Builder
	subject := "group " + r.Group.Name
	if r.Pipeline != "" {
		subject = r.Pipeline + ": " + subject
	}
	fmt.Fprintf(&b, "%s on %s (cluster %s): %s\n", subject, strings.Join(r.Topics, ", "), r.Cluster, r.Status)
	fmt.Fprintf(&b, "%s\n", r.Evidence)
	b.WriteString(formatGroupLine(r))
	if r.Mismatch != nil {
		fmt.Fprintf(&b, "WRONG GROUP? %s\n", r.Mismatch.Evidence)
	}
	b.WriteByte('\n')

	rows := make([]int, len(r.Partitions))
	for i := range rows {
		rows[i] = i
	}
	sort.SliceStable(rows, func(a, c int) bool {
		pa, pc := r.Partitions[rows[a]], r.Partitions[rows[c]]
		if ra, rc := rowRank(pa.Status), rowRank(pc.Status); ra != rc {
			return ra > rc
		}
		if pa.Lag != pc.Lag {
			return pa.Lag > pc.Lag
		}
		return rows[a] < rows[c]
	})
	shown := rows
	if len(shown) > maxRows {
		shown = rows[:maxRows]
	}
	multi := len(r.Topics) > 1
	header := []string{"PART", "LOG END", "COMMITTED", "LAG", "AGE", "STATUS", "MEMBER"}
	right := []bool{true, true, true, true, true, false, false}
	if multi {
		header = append([]string{"TOPIC"}, header...)
		right = append([]bool{false}, right...)
	}
	var table [][]string
	for _, i := range shown {
		p := r.Partitions[i]
		row := []string{strconv.Itoa(int(p.Partition)), formatOffset(p.LogEnd), formatOffset(p.Committed), formatLagCell(p.Lag),
			formatAgeCell(p.Age, p.AgeSource), p.Status.String(), p.Member}
		if multi {
			row = append([]string{p.Topic}, row...)
		}
		table = append(table, row)
	}
	writeTable(&b, header, table, right)
	if rest := rows[len(shown):]; len(rest) > 0 {
		var lag int64
		counts := map[Status]int{}
		for _, i := range rest {
			if r.Partitions[i].Lag > 0 {
				lag += r.Partitions[i].Lag
			}
			counts[r.Partitions[i].Status]++
		}
		fmt.Fprintf(&b, "… %s more %s: lag %s, %s\n", groupDigits(int64(len(rest))), pluralNoun(len(rest), "partition"),
			groupDigits(lag), formatCounts(counts))
	}
	t := r.Totals
	fmt.Fprintf(&b, "total: %s, lag %s", plural(t.Partitions, "partition"), groupDigits(t.Lag))
	if t.NoCommit > 0 {
		fmt.Fprintf(&b, ", %d without commit", t.NoCommit)
	}
	if t.Unknown > 0 {
		fmt.Fprintf(&b, ", %d unknown", t.Unknown)
	}
	if t.MaxAge > 0 {
		fmt.Fprintf(&b, "; oldest unconsumed %s (%s p%d)", formatAgeCell(t.MaxAge, t.MaxAgeFrom), t.MaxAgeAt.Topic, t.MaxAgeAt.Partition)
	}
	b.WriteByte('\n')
	for _, p := range r.Partitions {
		if p.AgeNote != "" {
			fmt.Fprintf(&b, "note: %s p%d: %s\n", p.Topic, p.Partition, p.AgeNote)
		}
	}
	writeUnavailable(&b, r.Unavailable)
	if r.History > 0 {
		fmt.Fprintf(&b, "history: %s; stall_after %s\n", plural(r.History, "stored sample"), formatAge(r.StallAfter))
	} else {
		b.WriteString("history: none stored yet; the verdict rests on this answer alone\n")
	}
	return b.String()
}

// rowRank orders table rows: problems first, then partitions nothing is
// known about, then healthy ones.
func rowRank(s Status) int {
	switch s {
	case StatusOK:
		return 0
	case StatusUnknown:
		return 1
	}
	return int(s) + 1
}

func formatGroupLine(r *LagReport) string {
	g := r.Group
	if !r.GroupExists {
		return fmt.Sprintf("group %s does not exist (no members, no commits on these topics)\n", g.Name)
	}
	state := g.State
	if state == "" {
		state = "state unknown"
	}
	line := fmt.Sprintf("state %s, %s", state, plural(len(g.Members), "member"))
	if len(g.Members) == 0 {
		return line + "\n"
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
	return line + ": " + strings.Join(ms, "; ") + "\n"
}

// FormatGroups renders a groups report as plain text, at most maxRows
// groups (0 means DefaultMaxRows).
func FormatGroups(r *GroupsReport, maxRows int) string {
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	var b strings.Builder
	fmt.Fprintf(&b, "groups on %s (cluster %s): %s, %s, log end total %s\n", r.Topic, r.Cluster,
		plural(len(r.Groups), "group"), plural(r.Partitions, "partition"), groupDigits(r.LogEndSum))
	if len(r.Groups) == 0 {
		b.WriteString("no group has commits on the topic or members assigned to it\n")
	} else {
		b.WriteByte('\n')
		header := []string{"GROUP", "STATE", "MEMBERS", "ASSIGNED", "COMMITTED", "LAG", "COMMITS", "ACTIVE"}
		right := []bool{false, false, true, true, true, true, false, false}
		var table [][]string
		shown := r.Groups
		if len(shown) > maxRows {
			shown = shown[:maxRows]
		}
		for _, g := range shown {
			lag := "-"
			if g.LagKnown {
				lag = groupDigits(g.Lag)
			}
			moved := "-"
			if mv := g.Movement; mv != nil && mv.Samples > 1 {
				moved = fmt.Sprintf("+%s in %s", groupDigits(mv.Advanced), formatAge(mv.Span))
			}
			active := "no"
			if g.Active {
				active = "yes: " + g.ActiveReason
			}
			name := g.Group.Name
			if g.Spark {
				name += " (spark)"
			}
			state := g.Group.State
			if state == "" {
				state = "?"
			}
			table = append(table, []string{name, state, strconv.Itoa(g.Members), strconv.Itoa(g.Assigned),
				fmt.Sprintf("%d/%d", g.Committed, r.Partitions), lag, moved, active})
		}
		writeTable(&b, header, table, right)
		if rest := len(r.Groups) - len(shown); rest > 0 {
			fmt.Fprintf(&b, "… %d more %s\n", rest, pluralNoun(rest, "group"))
		}
	}
	writeUnavailable(&b, r.Unavailable)
	return b.String()
}

func writeUnavailable(b *strings.Builder, us []Unavailable) {
	for _, u := range us {
		fmt.Fprintf(b, "unknown %s", u.What)
		if len(u.Partitions) > 0 {
			fmt.Fprintf(b, " of %s", formatTPs(u.Partitions))
		}
		fmt.Fprintf(b, ": %v\n", u.Err)
	}
}

// formatTPs names partitions compactly: "orders p0-3,7".
func formatTPs(tps []TopicPartition) string {
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

func formatCounts(counts map[Status]int) string {
	var parts []string
	for st := StatusStopped; st >= StatusUnknown; st-- {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", groupDigits(int64(n)), st))
		}
	}
	return strings.Join(parts, ", ")
}

func formatOffset(o int64) string {
	switch o {
	case NoOffset:
		return "none"
	case UnknownOffset:
		return "?"
	}
	return groupDigits(o)
}

func formatLagCell(l int64) string {
	if l < 0 {
		return "-"
	}
	return groupDigits(l)
}

func formatAgeCell(d time.Duration, src AgeSource) string {
	age := formatAge(d)
	switch src {
	case AgeRecord:
		return age
	case AgeEstimated:
		return "~" + age
	case AgeAtLeast:
		return "≥" + age
	}
	return "-"
}

// writeTable writes a fixed-width table, right-aligning the columns marked
// in right.
func writeTable(b *strings.Builder, header []string, rows [][]string, right []bool) {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	line := func(cells []string) {
		var l strings.Builder
		for i, cell := range cells {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				l.WriteString("  ")
			}
			if right[i] {
				l.WriteString(pad + cell)
			} else {
				l.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	line(header)
	for _, row := range rows {
		line(row)
	}
}
