package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// Health is what the probe and status commands need.
type Health interface {
	Names() []string
	Probe(ctx context.Context, pipeline string) (probe.Result, error)
	History(ctx context.Context, pipeline string, n int64) ([]state.ProbeRecord, error)
	Digest(ctx context.Context) (pipeline.Digest, error)
}

// RegisterHealth adds `probe`, `probe history` and `status`.
func (h *Handler) RegisterHealth(hs Health) {
	h.Register(&Command{Path: "probe", Args: "PIPELINE|all",
		Min: 1, Max: 1, Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			names := []string{args[0]}
			if args[0] == "all" {
				names = hs.Names()
			}
			var r Reply
			for _, n := range names {
				res, err := hs.Probe(ctx, n)
				if err != nil && res.Status == "" {
					return Reply{}, err
				}
				r.Sections = append(r.Sections, Section{Title: fmt.Sprintf("%s: %s", n, res.Status), Lines: ProbeLines(res), Pre: true})
				if r.Text != "" {
					r.Text += "; "
				}
				r.Text += fmt.Sprintf("%s %s", n, res.Status)
			}
			if len(names) == 0 {
				r.Text = "No pipeline has a checkpoint to probe."
			}
			return r, nil
		}})
	h.Register(&Command{Path: "probe history", Args: "PIPELINE",
		Min: 1, Max: 1, Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			recs, err := hs.History(ctx, args[0], 20)
			if err != nil {
				return Reply{}, err
			}
			if len(recs) == 0 {
				return Reply{Text: args[0] + " has not been probed yet."}, nil
			}
			lines := []string{fmt.Sprintf("%-20s %-9s %-18s %8s  %s", "TIME", "STATUS", "CLASS", "TOOK", "REASON")}
			for _, r := range recs {
				var res probe.Result
				_ = json.Unmarshal(r.Result, &res)
				lines = append(lines, fmt.Sprintf("%-20s %-9s %-18s %8s  %s", human.Stamp(r.At), r.Status, dash(r.Class),
					res.Took.Round(1e6), r.Reason))
			}
			return Reply{Text: fmt.Sprintf("Last %d probes of %s", len(recs), args[0]), Sections: []Section{{Lines: lines, Pre: true}}}, nil
		}})
	h.Register(&Command{Path: "status", Max: 0,
		Run: func(ctx context.Context, _ Request, _ []string) (Reply, error) {
			d, err := hs.Digest(ctx)
			if err != nil {
				return Reply{}, err
			}
			var bad []string
			for _, r := range d.Rows {
				if r.Status != string(probe.StatusOK) {
					bad = append(bad, r.Pipeline+" "+probeStatus(r.Status))
				}
			}
			text := fmt.Sprintf("%d pipeline%s, all OK", len(d.Rows), human.Plural(len(d.Rows)))
			if len(bad) > 0 {
				text = "Needs a look: " + strings.Join(bad, ", ")
			}
			if len(d.Notes) > 0 {
				text += fmt.Sprintf(" (%d note%s below)", len(d.Notes), human.Plural(len(d.Notes)))
			}
			r := Reply{Text: text, Sections: []Section{{Lines: digestLines(d), Pre: true}}}
			if s := h.silencesSection(ctx); s != nil {
				r.Sections = append(r.Sections, *s)
			}
			return r, nil
		}})
}
