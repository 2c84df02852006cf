package commands

import (
	"context"
	"time"

	"github.com/streamwatch/streamwatch/pipeline"
)

// Watcher starts recovery watches.
type Watcher interface {
	// StartWatch records the pipeline's progress now and watches it for d; it reports into
	// incident's thread when set, else into channel. It returns the baseline it measured.
	StartWatch(ctx context.Context, pipeline, incident, channel, by string, d time.Duration) (pipeline.Progress, error)
}

// RegisterWatch adds `watch`.
func (h *Handler) RegisterWatch(w Watcher) {
	h.Register(&Command{Path: "watch", Args: "PIPELINE [for DURATION]", Summary: "after a fix: report when progress resumes (default for 30m)",
		Min: 1, Max: 3, Example: "watch sms-replies for 30m", Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			d := 30 * time.Minute
			switch len(args) {
			case 1:
			case 3:
				var err error
				if args[1] != "for" {
					return Reply{}, watchForUsage(args[1], []string{h.find("watch").Usage(h.Name)})
				}
				if d, err = time.ParseDuration(args[2]); err != nil || d <= 0 || d > 24*time.Hour {
					return Reply{}, watchSpanUsage(args[2], []string{h.find("watch").Usage(h.Name)})
				}
			default:
				return Reply{}, watchUsage([]string{h.find("watch").Usage(h.Name)})
			}
			incident := ""
			if id, _, err := h.target(ctx, req, nil, "watch"); err == nil {
				incident = id
			}
			base, err := w.StartWatch(ctx, args[0], incident, req.ChannelID, req.Actor(), d)
			if err != nil {
				return Reply{}, err
			}
			h.audit(ctx, req, "watch", args[0], "done", "for "+d.String())
			return Reply{Text: watchingText(args[0], d, incident, base), Public: true}, nil
		}})
}
