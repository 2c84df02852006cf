package commands

import (
	"context"
	"errors"
	"sort"

	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// Postmortem is what the postmortem draft reads: the incident's full timeline, its alerts'
// labels and annotations, and the audit trail.
type Postmortem interface {
	FullTimeline(ctx context.Context, id string) ([]state.Event, int64, error)
	AlertContexts(ctx context.Context, id string) (map[string]state.AlertContext, error)
	AuditTrail
}

// File is a document a reply shares in Slack (the bot uploads it): a postmortem draft.
type File struct {
	Name    string // file name, e.g. INC-7-postmortem.md
	Title   string
	Content string
	// Channel and ThreadTS are where it is shared: the incident's thread (ThreadTS "" for the
	// channel itself).
	Channel, ThreadTS string
	// Comment introduces it in the thread.
	Comment string
}

// auditForPostmortem bounds the audit entries the draft lists.
const auditForPostmortem = 500

// RegisterPostmortem adds `incident postmortem`: a Markdown draft of the incident, shared as a
// file in its thread. Anyone who may see the incident may draft it; it is audited.
func (h *Handler) RegisterPostmortem(src Postmortem) {
	h.Register(&Command{Path: incidentPostmortemPath, Args: "[ID]",
		Max: 1, Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			id, _, err := h.target(ctx, req, args, incidentPostmortemPath)
			if err != nil {
				return Reply{}, err
			}
			inc, err := h.incident(ctx, req, id)
			if err != nil {
				return Reply{}, err
			}
			tl, dropped, err := src.FullTimeline(ctx, id)
			if err != nil {
				return Reply{}, err
			}
			contexts, err := src.AlertContexts(ctx, id)
			if err != nil {
				return Reply{}, err
			}
			now := h.Now()
			end := now
			if inc.Status == state.StatusResolved {
				end = inc.ResolvedAt
			}
			audit, err := src.AuditTrail(ctx, func(e state.AuditEntry) bool {
				if e.Incident == id || e.Target == id {
					return true
				}
				// The pipeline's remediations while the incident lasted.
				return inc.Pipeline != "" && e.Pipeline == inc.Pipeline && !e.At.Before(inc.FirstSeen) && !e.At.After(end)
			}, auditForPostmortem, auditScanned)
			if err != nil {
				return Reply{}, err
			}
			channel, thread := inc.RootChannel, inc.RootTS
			if channel == "" || thread == "" {
				channel, thread = req.ChannelID, ""
			}
			chart, progress := h.postmortemChart(ctx, inc)
			if chart != nil {
				chart.Channel, chart.ThreadTS = channel, thread
				chart.Comment = postmortemChartComment(inc.Pipeline, id, chart.Name)
			}
			draft := postmortemDocument(inc, tl, dropped, contexts, audit, now, progress)
			name := inc.ID + "-postmortem.md"
			h.record(ctx, req, state.AuditEntry{Action: "postmortem draft", Target: id, Outcome: "done",
				Detail: postmortemAuditDetail(name, len(tl)), Incident: id, Pipeline: inc.Pipeline})
			return Reply{
				Text: postmortemPosted(id, name, len(tl)),
				File: &File{Name: name, Title: postmortemTitle(inc), Content: draft,
					Channel: channel, ThreadTS: thread, Comment: postmortemComment(id, req.Actor())},
				Chart: chart,
			}, nil
		}})
}

// postmortemChart is the progress chart the draft embeds (shared beside it, in the same
// thread) and the draft's Progress section: the image, referred to by its file name, with its
// alt text; or why there is no chart. An incident of no pipeline, or a deployment without
// charts, has neither.
func (h *Handler) postmortemChart(ctx context.Context, inc *state.Incident) (*Chart, string) {
	if h.charts == nil || inc.Pipeline == "" {
		return nil, ""
	}
	data, err := h.charts.Chart(ctx, inc.Pipeline, 0, inc.ID)
	var no *pipeline.NoChartError
	switch {
	case errors.As(err, &no):
		if no.Unsampled {
			return nil, ""
		}
		return nil, md(noChart(no))
	case err != nil:
		return nil, postmortemNoChart(err)
	}
	c := ChartReply(data, inc.ID).Chart
	return c, postmortemChartEmbed(c)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
