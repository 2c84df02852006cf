package commands

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/charts"
	"github.com/streamwatch/streamwatch/pipeline"
)

// ChartSource assembles a pipeline's progress chart (pipeline.Charts): over the last span (0:
// charts.window), marking incident's events ("": the pipeline's open incident). A chart that
// cannot be drawn is a *pipeline.NoChartError.
type ChartSource interface {
	Chart(ctx context.Context, pipeline string, span time.Duration, incident string) (charts.Chart, error)
}

// Chart is a picture a reply shares in Slack: the bot draws Data (charts.Render) and uploads
// it with Alt as its alt text, in Channel (in the thread of ThreadTS when set; both empty for
// a note, which goes into its incident's thread), introduced by Comment (or, empty, the
// reply's text).
type Chart struct {
	Name     string       `json:"name"`
	Title    string       `json:"title"`
	Alt      string       `json:"alt"`
	Data     charts.Chart `json:"data"`
	Channel  string       `json:"channel,omitempty"`
	ThreadTS string       `json:"thread_ts,omitempty"`
	Comment  string       `json:"comment,omitempty"`
}

// RegisterChart adds `chart PIPELINE [for DURATION]`: the pipeline's progress chart, posted in
// the channel or the thread the command was typed in. PostChart and the postmortem draft use
// src too; PostChart posts into t.
func (h *Handler) RegisterChart(src ChartSource, t Thread) {
	h.charts, h.thread = src, t
	h.Register(&Command{Path: "chart", Args: "PIPELINE [for DURATION]",
		Summary: "a chart of the pipeline's progress (records waiting, group lag, oldest record's age, commits, the incident's events), posted here",
		Min:     1, Max: 3, Example: "chart sms-replies for 2h", Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			span, err := h.chartSpan(args)
			if err != nil {
				return Reply{}, err
			}
			incident := ""
			if req.ThreadTS != "" {
				if incident, err = h.Incidents.ByThread(ctx, req.ChannelID, req.ThreadTS); err != nil {
					return Reply{}, err
				}
			}
			data, err := src.Chart(ctx, args[0], span, incident)
			var no *pipeline.NoChartError
			if errors.As(err, &no) {
				return Reply{Text: noChart(no)}, nil
			}
			if err != nil {
				return Reply{}, err
			}
			r := ChartReply(data, incident)
			r.Chart.Channel, r.Chart.ThreadTS = req.ChannelID, req.ThreadTS
			r.Chart.Comment = chartComment(r.Text, req.Actor())
			r.Text, r.Public = chartPosted(args[0]), false
			return r, nil
		}})
}

// chartSpan reads `[for DURATION]`: a Go duration of at least a minute.
func (h *Handler) chartSpan(args []string) (time.Duration, error) {
	usage := []string{h.find("chart").Usage(h.Name)}
	switch len(args) {
	case 1:
		return 0, nil
	case 3:
		if strings.EqualFold(args[1], "for") {
			d, err := time.ParseDuration(strings.ToLower(args[2]))
			if err != nil || d < time.Minute {
				return 0, chartSpanUsage(args[2], usage)
			}
			return d, nil
		}
	}
	return 0, chartUsage(usage)
}

// PostChart posts the pipeline's progress chart into the incident's thread, through the
// outbox (the bot draws and uploads it when it delivers it): with a non-empty once, only the
// first chart carrying that flag (a second replica's, a restart's) is posted. A chart that
// cannot be drawn posts its reason instead, in one line; a pipeline streamwatch does not sample
// posts nothing.
func (h *Handler) PostChart(ctx context.Context, incident, pipelineName, once string) error {
	if h.charts == nil || h.thread == nil {
		return errors.New("no charts are set up")
	}
	data, err := h.charts.Chart(ctx, pipelineName, 0, incident)
	var no *pipeline.NoChartError
	switch {
	case errors.As(err, &no) && no.Unsampled:
		return nil
	case errors.As(err, &no):
		_, err = h.thread.NoteWithSummary(ctx, incident, "chart", "streamwatch", noChart(no), noChart(no), once)
		return err
	case err != nil:
		return err
	}
	r := ChartReply(data, incident)
	_, err = h.thread.NoteWithSummary(ctx, incident, "chart", "streamwatch", r.Text, EncodeReply(r), once)
	return err
}
