package commands_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/charts"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/pipeline"
)

// chartSource answers with a chart, or its error, and records what it was asked.
type chartSource struct {
	chart charts.Chart
	err   error
	asked []string
}

func (c *chartSource) Chart(_ context.Context, p string, span time.Duration, incident string) (charts.Chart, error) {
	c.asked = append(c.asked, p+" "+span.String()+" "+incident)
	return c.chart, c.err
}

// stalledChart: records pile up from 13:20, when they began to wait with no commit, to 1,234 at
// 14:02 (Paris time: 14:20 and 15:02).
func stalledChart() charts.Chart {
	to := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC)
	stall := time.Date(2026, 12, 5, 13, 20, 0, 0, time.UTC)
	c := charts.Chart{Pipeline: "sms-replies", From: to.Add(-6 * time.Hour), To: to, TimeZone: "Europe/Paris",
		Stall: &charts.Span{From: stall}, Commits: []charts.Commit{{At: stall, Batch: 41}},
		Events: []charts.Event{{At: stall.Add(11 * time.Minute), Kind: charts.Opened, Label: "INC-7 opened"}}}
	for at := c.From; !at.After(to); at = at.Add(time.Minute) {
		p := charts.Point{At: at, Waiting: 3, GroupLag: 2, Oldest: 5}
		if at.After(stall) {
			m := int64(at.Sub(stall) / time.Minute)
			p.Waiting, p.GroupLag, p.Oldest = min(m*29, 1234), min(m*28, 1200), m*60
		}
		c.Points = append(c.Points, p)
	}
	return c
}

// TestChartAlt: the alt text states, in one sentence, the peak waiting count and when, the
// stall's start, in the chart's time zone.
func TestChartAlt(t *testing.T) {
	alt := commands.ChartAlt(stalledChart())
	for _, want := range []string{"Chart of sms-replies from 10:00 to 16:00 (Europe/Paris)", "records waiting beyond the checkpoint peaked at 1,234 at 15:03",
		"the shaded stall began at 14:20, when records began to wait with no checkpoint commit, and goes on", "the oldest waiting record reached 1h40m",
		"1 checkpoint commit are ticked", "lines mark INC-7 opened at 14:31"} {
		if !strings.Contains(alt, want) {
			t.Errorf("the alt text lacks %q:\n%s", want, alt)
		}
	}
	if strings.Count(alt, ".") != 1 || !strings.HasSuffix(alt, ".") || strings.Contains(alt, "\n") || len([]rune(alt)) > 1000 {
		t.Errorf("the alt text is not one sentence of at most 1,000 characters: %q", alt)
	}
}

// TestChartCommand: `chart PIPELINE [for DURATION]` asks for the span and posts the chart in
// the channel, or the thread it was typed in; bad input answers with usage; a chart that
// cannot be drawn answers its reason in one line.
func TestChartCommand(t *testing.T) {
	ctx := context.Background()
	h, st := newHandler(t)
	src := &chartSource{chart: stalledChart()}
	h.RegisterChart(src, st)
	r := h.Handle(ctx, commands.Request{UserID: "U1", UserName: "alice", ChannelID: "C0PIPE", ThreadTS: "1.2", Text: "chart sms-replies for 2h"})
	if r.Chart == nil || r.Chart.Channel != "C0PIPE" || r.Chart.ThreadTS != "1.2" || r.Text != "Posted the chart of sms-replies here." {
		t.Fatalf("reply %+v", r)
	}
	if src.asked[0] != "sms-replies 2h0m0s " {
		t.Errorf("asked for %q", src.asked[0])
	}
	if !strings.HasPrefix(r.Chart.Comment, "Progress of sms-replies over the last 6h (times in Europe/Paris): records waiting peaked at 1,234 at 15:03; no checkpoint progress since 14:20.") ||
		!strings.HasSuffix(r.Chart.Comment, "Asked by alice.") || r.Chart.Alt != commands.ChartAlt(src.chart) || !strings.HasSuffix(r.Chart.Name, ".png") {
		t.Errorf("chart %q / %q / %q", r.Chart.Name, r.Chart.Comment, r.Chart.Alt)
	}
	for _, bad := range []string{"chart", "chart sms-replies 2h", "chart sms-replies for soon", "chart sms-replies for 10s", "chart sms-replies during 2h"} {
		r := h.Handle(ctx, commands.Request{ChannelID: "C0PIPE", Text: bad})
		if !r.Usage || !strings.Contains(replyText(r), "/streamwatch chart PIPELINE [for DURATION]") || r.Chart != nil {
			t.Errorf("%q: %+v, want usage", bad, r)
		}
	}
	for _, c := range []struct {
		err  pipeline.NoChartError
		want string
	}{
		{pipeline.NoChartError{Why: pipeline.NoChartYet, Pipeline: "sms-replies", Span: 6 * time.Hour, Every: 30 * time.Second},
			"No chart of sms-replies yet: no progress samples in the last 6h (a sampling round every 30s keeps one)."},
		{pipeline.NoChartError{Why: pipeline.NoChartNoKafka, Pipeline: "sms-replies", Unsampled: true},
			"No chart of sms-replies: it has no kafka section, so streamwatch samples no progress of it."},
		{pipeline.NoChartError{Why: pipeline.NoChartOff, Pipeline: "sms-replies", Unsampled: true}, "Charts are off (charts.enabled: false)."},
	} {
		src.err = &c.err
		r = h.Handle(ctx, commands.Request{ChannelID: "C0PIPE", Text: "chart sms-replies"})
		if r.Chart != nil || r.Text != c.want || len(r.Sections) > 0 {
			t.Errorf("%s: %+v, want %q", c.err.Why, r, c.want)
		}
	}
}

func replyText(r commands.Reply) string {
	s := r.Text
	for _, sec := range r.Sections {
		s += "\n" + strings.Join(sec.Text(), "\n")
	}
	return s
}
