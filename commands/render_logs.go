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
				strings.ToUpper(m.Signature.Severity.String()), signatureTitle(m.Signature.ID), m.Signature.ID,
				times(m.Count), logWhen(r, m)))
			out = append(out, "  "+signatureCause(m.Signature.ID))
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
	if len(r.Errors) > 0 || len(r.Skipped) > 0 {
		out = append(out, "Errors:")
		e := 0
		for _, k := range r.Skipped { // in the order the scan met them
			for ; e < min(k.Errors, len(r.Errors)); e++ {
				out = append(out, "  "+r.Errors[e])
			}
			out = append(out, "  "+skipLine(k))
		}
		for _, msg := range r.Errors[e:] {
			out = append(out, "  "+msg)
		}
	}
	return out
}

// skipLine words a path the scan passed over.
func skipLine(k driverlog.Skip) string {
	switch k.Kind {
	case driverlog.SkipNoFile:
		return "no file matches " + k.Path
	case driverlog.SkipNoObject:
		return "no object matches " + k.Path
	case driverlog.SkipDirectory:
		return k.Path + " is a directory, not a log file"
	case driverlog.SkipNotRegular:
		return fmt.Sprintf("%s is not a regular file (%s)", k.Path, k.Mode)
	case driverlog.SkipTooMany:
		return fmt.Sprintf("skipped the %d least recently modified of %d log files; only the newest %d are scanned", k.N, k.Of, k.Max)
	}
	return string(k.Kind) + " " + k.Path
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

// signatureWords are each driver-log signature's title (a few words for a report line) and
// what it means for on-call (one sentence), by driverlog.Signature.ID.
var signatureWords = map[string]struct{ title, cause string }{
	"CONCURRENT_QUERY": {
		"Two runs on one checkpoint",
		"Two drivers (or a stray file left in offsets/ or commits/) are writing the same checkpoint, so batches fail or are replayed until the duplicate run is stopped.",
	},
	"PERMISSION_DENIED": {
		"Permission denied on checkpoint storage",
		"The Spark user may not read or write the checkpoint location (file mode, HDFS ACL, or S3 bucket or IAM policy), so no batch can commit until access is restored.",
	},
	"CHECKPOINT_WRITE_FAILED": {
		"Checkpoint write failed",
		"Spark could not publish a checkpoint or state file (rename refused, metadata or state store write failed), so the batch fails and is retried from the last commit.",
	},
	"STORAGE_FULL": {
		"Disk full or quota exceeded",
		"The filesystem or HDFS quota behind the checkpoint (or the executors' local dirs) is full, so checkpoint and state writes fail until space is freed.",
	},
	"STATE_LOAD_FAILED": {
		"State files missing or unreadable",
		"A state store version could not be rebuilt because its delta, snapshot or RocksDB files are missing or corrupt (state behind the offsets and commits logs, typical of a partial restore), so the stateful query cannot continue on this checkpoint.",
	},
	"CHECKPOINT_LOG_CORRUPT": {
		"Checkpoint log file corrupt",
		"The newest offsets/ or commits/ file (or metadata) is empty, truncated or from another Spark version, and Spark will not fall back to older files, so the query cannot start until that file is moved aside.",
	},
	"BATCHES_MISSING": {
		"Checkpoint batches missing",
		"Files of offsets/ or commits/ that a restart needs were deleted (manual cleanup or a partial restore), so the query cannot resume from this checkpoint as it is.",
	},
	"SOURCES_CHANGED": {
		"Query sources differ from the checkpoint",
		"The job was deployed with a different number of sources than the checkpoint records, and Spark refuses to continue on this checkpoint.",
	},
	"QUERY_TERMINATED": {
		"Streaming query died",
		"The query stopped with an exception and stays down until the job is restarted; the other matches and the example line say why.",
	},
	"KAFKA_DATA_LOSS": {
		"Kafka data lost behind the checkpoint",
		"The checkpoint points at Kafka offsets the brokers no longer hold (retention, or a recreated topic), so records in the gap were skipped or the query failed, depending on failOnDataLoss.",
	},
	"STALE_STATE_RECONSTRUCTION": {
		"State rebuilt from checkpoint files",
		"A state store version was not in executor memory and was rebuilt from snapshot and delta files, which is normal once per partition after a restart but, when it repeats, means executors keep losing state or the checkpoint was restored from an older copy.",
	},
	"STATE_MAINTENANCE_FAILED": {
		"State snapshot or cleanup failed",
		"Background snapshots or cleanup of state files failed, so the query keeps running but delta files pile up and the next restart is slower (often a storage permission or space problem).",
	},
	"LOG_INCONSISTENT": {
		"Commit log behind the offsets log",
		"commits/ lags offsets/ by more than one batch (files deleted by hand, or async progress tracking), and Spark re-runs only the latest batch.",
	},
	"NON_ATOMIC_CHECKPOINT_FS": {
		"Checkpoint filesystem without atomic rename",
		"Spark fell back to the FileSystem API for the checkpoint (typical of object stores), so a crash during a write can leave a corrupt batch file behind.",
	},
	"CONF_FROM_CHECKPOINT": {
		"Session settings overridden by the checkpoint",
		"Settings pinned in the checkpoint (such as spark.sql.shuffle.partitions) won over the deployed job's values, and changing them needs a new checkpoint.",
	},
}

// signatureTitle is a signature's title, or its ID when it has none.
func signatureTitle(id string) string {
	if w, ok := signatureWords[id]; ok {
		return w.title
	}
	return id
}

// signatureCause says what a signature means for on-call, or "" when it has no words.
func signatureCause(id string) string { return signatureWords[id].cause }

// logsReply is the `logs` reply: the first signature found in the pipeline's driver logs, or
// none, then the report.
func logsReply(pipeline string, r driverlog.Report) Reply {
	text := "No checkpoint trouble in the logs of " + pipeline + "."
	if len(r.Matches) > 0 {
		text = "Checkpoint trouble in the logs of " + pipeline + ": " + signatureTitle(r.Matches[0].Signature.ID)
	}
	return Reply{Text: text, Sections: []Section{{Lines: logLines(r), Pre: true}}}
}
