package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/internal/human"
)

// logLines lay a driver-log report out, one line per element: for each signature its
// severity, title, count, first and last time, what it means, an example line and the file;
// then the files scanned ("(tail only)" when only the end was read; why a pod's log was the
// one read) and the errors.
func logLines(r driverlog.Report) []string {
	var out []string
	switch {
	case len(r.Matches) > 0:
		for _, m := range r.Matches {
			out = append(out, fmt.Sprintf("%s %s (%s): %s, %s",
				strings.ToUpper(m.Signature.Severity.String()), m.Signature.Title, m.Signature.ID,
				times(m.Count), logWhen(r, m)))
			out = append(out, "  "+m.Signature.Cause)
			if m.Example != "" {
				out = append(out, "  example: "+m.Example)
			}
			if m.File != "" {
				out = append(out, "  in "+m.File)
			}
		}
	case len(r.Files) > 0:
		out = append(out, "No checkpoint trouble found in the driver logs.")
	default:
		out = append(out, "No driver log was scanned.")
	}
	if len(r.Files) > 0 {
		out = append(out, "Files scanned:")
		for _, f := range r.Files {
			read := logBytes(f.Size)
			if f.Truncated {
				read = fmt.Sprintf("last %s of %s (tail only)", logBytes(f.BytesRead), logBytes(f.Size))
			}
			if f.ModTime.IsZero() { // a running container's log: when it was last written is not known
				out = append(out, fmt.Sprintf("  %s: %s", f.Path, read))
			} else {
				out = append(out, fmt.Sprintf("  %s: %s, modified %s", f.Path, read, logStamp(f.ModTime)))
			}
			if f.Pod != nil {
				out = append(out, "    "+podNote(*f.Pod))
			}
		}
	}
	if len(r.Errors) > 0 {
		out = append(out, "Errors:")
		for _, e := range r.Errors {
			out = append(out, "  "+e)
		}
	}
	return out
}

func logWhen(r driverlog.Report, m driverlog.Match) string {
	switch {
	case m.Last.IsZero():
		return "no timestamps"
	case m.First.Equal(m.Last):
		return "at " + logStamp(m.Last) + logAgo(r, m.Last)
	}
	return "first " + logStamp(m.First) + ", last " + logStamp(m.Last) + logAgo(r, m.Last)
}

func logAgo(r driverlog.Report, t time.Time) string {
	if r.ScannedAt.IsZero() || t.After(r.ScannedAt) {
		return ""
	}
	return " (" + human.Age(r.ScannedAt.Sub(t)) + " ago)"
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// logStamp writes a log time as the log had it, with its zone.
func logStamp(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

// logBytes writes a log file's size: 1023 B, 1.5 KiB, 8.0 MiB.
func logBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	value, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if value < unit {
			break
		}
		value, suffix = value/unit, s
	}
	return fmt.Sprintf("%.1f %s", value, suffix)
}
