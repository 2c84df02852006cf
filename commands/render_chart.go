package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/charts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// ChartReply is a chart as a reply: one line saying what it shows, the chart with its file
// name, title and alt text.
func ChartReply(c charts.Chart, incident string) Reply {
	name := c.Pipeline + "-progress-" + c.To.In(c.Location()).Format("20060102-150405") + ".png"
	if incident != "" {
		name = incident + "-" + name
	}
	return Reply{Text: chartHeadline(c), Public: true,
		Chart: &Chart{Name: name, Title: "Progress of " + c.Pipeline, Alt: ChartAlt(c), Data: c}}
}

// chartHeadline is the line that introduces a chart: its span and the two facts people ask
// first, the peak and since when.
func chartHeadline(c charts.Chart) string {
	s := fmt.Sprintf("Progress of %s over the last %s (times in %s)", c.Pipeline, human.Age(c.To.Sub(c.From).Round(time.Minute)), c.ZoneName())
	if peak, at, ok := peakWaiting(c); ok {
		s += fmt.Sprintf(": records waiting peaked at %s at %s", human.Digits(peak), clock(c, at))
	}
	if st := c.Stall; st != nil {
		if st.To.IsZero() {
			s += fmt.Sprintf("; no checkpoint progress since %s", clock(c, st.From))
		} else {
			s += fmt.Sprintf("; no checkpoint progress from %s to %s", clock(c, st.From), clock(c, st.To))
		}
	}
	return s + "."
}

// ChartAlt is a chart's alt text: what it shows, in one sentence (Slack's alt_txt, at most
// 1,000 characters).
func ChartAlt(c charts.Chart) string {
	var parts []string
	if peak, at, ok := peakWaiting(c); ok {
		parts = append(parts, fmt.Sprintf("records waiting beyond the checkpoint peaked at %s at %s", human.Digits(peak), clock(c, at)))
	} else {
		parts = append(parts, "the records waiting beyond the checkpoint are unknown")
	}
	if lag, at, ok := peak(c, func(p charts.Point) int64 { return p.GroupLag }); ok {
		parts = append(parts, fmt.Sprintf("the group's lag peaked at %s at %s", human.Digits(lag), clock(c, at)))
	}
	if old, _, ok := peak(c, func(p charts.Point) int64 { return p.Oldest }); ok {
		parts = append(parts, fmt.Sprintf("the oldest waiting record reached %s", human.Age(time.Duration(old)*time.Second)))
	}
	switch st := c.Stall; {
	case st == nil:
		parts = append(parts, "no stall is shaded")
	case st.To.IsZero():
		parts = append(parts, fmt.Sprintf("the shaded stall began at %s, when records began to wait with no checkpoint commit, and goes on", clock(c, st.From)))
	default:
		parts = append(parts, fmt.Sprintf("the shaded stall began at %s, when records began to wait with no checkpoint commit, and ended at %s", clock(c, st.From), clock(c, st.To)))
	}
	parts = append(parts, human.Count(len(c.Commits), "checkpoint commit")+" are ticked")
	failed := 0
	for _, p := range c.Probes {
		if !p.OK {
			failed++
		}
	}
	if len(c.Probes) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %s failed", failed, human.Count(len(c.Probes), "probe")))
	}
	if len(c.Events) > 0 {
		var ev []string
		for _, e := range c.Events {
			ev = append(ev, e.Label+" at "+clock(c, e.At))
		}
		parts = append(parts, "lines mark "+strings.Join(ev, ", "))
	}
	s := fmt.Sprintf("Chart of %s from %s to %s (%s): %s.", c.Pipeline, clock(c, c.From), clock(c, c.To), c.ZoneName(), strings.Join(parts, "; "))
	if r := []rune(s); len(r) > 1000 {
		s = string(r[:999]) + "…"
	}
	return s
}

// peakWaiting is the highest count of records waiting, and when (the first time) it was seen.
func peakWaiting(c charts.Chart) (int64, time.Time, bool) {
	return peak(c, func(p charts.Point) int64 { return p.Waiting })
}

func peak(c charts.Chart, value func(charts.Point) int64) (int64, time.Time, bool) {
	best, at, ok := int64(-1), time.Time{}, false
	for _, p := range c.Points {
		if v := value(p); v > best {
			best, at, ok = v, p.At, true
		}
	}
	return best, at, ok
}

// clock writes a moment of a chart as its axis does: the time of day in the chart's zone,
// with the date when the chart spans more than one day.
func clock(c charts.Chart, t time.Time) string {
	loc := c.Location()
	if c.From.In(loc).Format(time.DateOnly) == c.To.In(loc).Format(time.DateOnly) {
		return t.In(loc).Format("15:04")
	}
	return t.In(loc).Format("Jan 2 15:04")
}

// chartComment introduces a chart `chart` posts: its headline and who asked for it.
func chartComment(headline, actor string) string {
	return headline + " Asked by " + actor + "."
}

// chartPosted tells who asked for a pipeline's chart that it is posted.
func chartPosted(pipeline string) string {
	return "Posted the chart of " + pipeline + " here."
}

// chartSpanUsage refuses a chart's span that is no duration of at least a minute.
func chartSpanUsage(arg string, usages []string) error {
	return &UsageError{Msg: fmt.Sprintf("for %s: want a duration of at least a minute, such as 30m or 6h", arg), Usages: usages}
}

// chartUsage refuses a `chart` whose words are not a pipeline and optionally for and a span.
func chartUsage(usages []string) error {
	return &UsageError{Msg: "chart takes a pipeline, then optionally for and a duration", Usages: usages}
}

// noChart says in one sentence why a chart cannot be drawn.
func noChart(e *pipeline.NoChartError) string {
	switch e.Why {
	case pipeline.NoChartOff:
		return "Charts are off (charts.enabled: false)."
	case pipeline.NoChartNoKafka:
		return "No chart of " + e.Pipeline + ": it has no kafka section, so streamwatch samples no progress of it."
	case pipeline.NoChartYet:
		return fmt.Sprintf("No chart of %s yet: no progress samples in the last %s (a sampling round every %s keeps one).",
			e.Pipeline, human.Age(e.Span), human.Age(e.Every))
	}
	return e.Error()
}
