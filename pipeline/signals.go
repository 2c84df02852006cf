package pipeline

import (
	"time"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
)

// Signal is a symptom detection looks for on every sampling round (docs/detection.md); the
// symptoms of a diagnosis (Symptom) are judged from every check at once, on demand.
type Signal string

// The symptoms, in the order they are named.
const (
	// SignalStale: records have waited beyond the checkpoint's offsets for
	// checkpoint.stale_after with no checkpoint commit (from the later of the newest commit
	// and the moment they began to wait).
	SignalStale Signal = "checkpoint_stale"
	// SignalStalled: the documented group is STALLED or STOPPED (kafka.stall_after).
	SignalStalled Signal = "group_stalled"
	// SignalLag: the oldest record the checkpoint has not reached is older than
	// detect.max_lag.
	SignalLag Signal = "lag"
	// SignalSilent: the driver log has said nothing of the query (no "made progress", no
	// "idle" line) for detect.heartbeat_after: it is hung or dead, whatever its topic does.
	SignalSilent Signal = "query_silent"
	// SignalRetention: the oldest record the checkpoint has not reached has used 90% of its
	// topic's retention.ms: retention is about to delete records the query never read.
	SignalRetention Signal = "retention_risk"
	// SignalSlow: the batch the query planned and has not committed has run more than 5 ×
	// its usual duration, and at least 20s (checkpoint.stale_after: auto; slowbatch.go).
	SignalSlow Signal = "batch_slow"
)

// Signals lists every symptom, in order.
var Signals = []Signal{SignalSilent, SignalSlow, SignalStale, SignalStalled, SignalLag, SignalRetention}

// Rounds a symptom must hold to become active, and be clear to recover.
const (
	holdRounds  = 2
	clearRounds = 2
)

// Observation is one round's look at a pipeline: the numbers, and which symptoms hold.
type Observation struct {
	At time.Time `json:"at"`
	// The checkpoint (CheckpointKnown false when it has none or could not be read).
	CheckpointKnown bool          `json:"ckpt_known,omitempty"`
	CheckpointErr   string        `json:"ckpt_err,omitempty"`
	Batch           int64         `json:"batch"`
	CommitAge       time.Duration `json:"commit_age,omitempty"` // -1: no commit yet
	// Waiting is the records the brokers still hold beyond the checkpoint's offsets (-1:
	// unknown); Lost those retention deleted before the query read them.
	Waiting int64 `json:"waiting"`
	Lost    int64 `json:"lost,omitempty"`
	// WaitingSince is when records began to wait beyond the checkpoint (zero: none wait);
	// WaitingFor how long they have waited with no checkpoint commit (-1: none wait, or no
	// commit to measure from): the checkpoint_stale clock.
	WaitingSince time.Time     `json:"waiting_since,omitzero"`
	WaitingFor   time.Duration `json:"waiting_for"`
	// Oldest is the age of the oldest of them, from its own timestamp; OldestKnown says
	// whether it could be read; OldestAt names its partition.
	Oldest      time.Duration `json:"oldest,omitempty"`
	OldestKnown bool          `json:"oldest_known,omitempty"`
	OldestAt    string        `json:"oldest_at,omitempty"`
	// The documented group: its records waiting (-1: unknown) and the evaluator's verdict.
	Group        string         `json:"group"`
	GroupWaiting int64          `json:"group_waiting"`
	GroupStatus  string         `json:"group_status,omitempty"`
	GroupStatusN int            `json:"group_status_n"`
	GroupSummary *kafka.Summary `json:"group_summary,omitempty"`
	// GroupEvidence is an earlier version's words for GroupSummary, read from stored
	// observations; this version leaves it empty (commands words GroupSummary).
	GroupEvidence string `json:"group_evidence,omitempty"`
	// Holds says, for each symptom judged this round, whether it holds; a symptom absent
	// could not be judged (its numbers were unknown).
	Holds map[Signal]bool `json:"holds"`
	// Active are the signals active after this round (the hysteresis's verdict).
	Active []Signal `json:"active,omitempty"`
	// Partitions are per-partition numbers, kept only with http.metrics_partitions.
	Partitions []PartitionProgress `json:"partitions,omitempty"`

	StaleAfter time.Duration `json:"stale_after,omitempty"`
	// Interval is the learned batch interval behind StaleAfter (stale_after: auto; 0: fixed,
	// or not learned yet).
	Interval time.Duration `json:"interval,omitempty"`
	MaxLag   time.Duration `json:"max_lag,omitempty"`

	// The query's heartbeat in the driver log: the newest progress or idle line (BeatLine,
	// written at BeatAt, of run BeatRun), SilentFor how long ago (-1: no such line, or not
	// watched); LogWritten when the log was last written (a running driver writes it); BeatLog
	// the log and BeatPod what its source says of the driver (BeatNote: an earlier version's
	// words for it);
	// Liveness says why liveness is not watched ("" when it is; LivenessErr the read's error).
	BeatAt         time.Time     `json:"beat_at,omitzero"`
	BeatLine       string        `json:"beat_line,omitempty"`
	BeatRun        string        `json:"beat_run,omitempty"`
	SilentFor      time.Duration `json:"silent_for"`
	LogWritten     time.Time     `json:"log_written,omitzero"`
	BeatLog        string        `json:"beat_log,omitempty"` // the log the line is in
	BeatNote       string        `json:"beat_note,omitempty"`
	Liveness       LivenessGap   `json:"liveness,omitempty"`
	LivenessErr    string        `json:"liveness_err,omitempty"`
	HeartbeatAfter time.Duration `json:"heartbeat_after,omitempty"`

	BeatPod *driverlog.PodNote `json:"beat_pod,omitempty"` // whether its driver pod still runs, where known

	// Retention headroom: the largest share of its topic's retention.ms an unread record has
	// used (RetentionTopic, Retention, the time left), the partitions at or over
	// detect.retention_warning, and the compacted topics left out.
	RetentionShare float64       `json:"retention_share,omitempty"`
	RetentionTopic string        `json:"retention_topic,omitempty"`
	Retention      time.Duration `json:"retention,omitempty"`
	RetentionLeft  time.Duration `json:"retention_left,omitempty"`
	RetentionParts []int32       `json:"retention_parts,omitempty"`
	Compacted      []string      `json:"compacted,omitempty"`

	// The batch in flight (stale_after: auto): Running planned at RunningSince (zero: none in
	// flight, or not judged) and not committed for RunningFor; the usual batch duration
	// learned from the commit history (0: not learned) and the threshold it gives.
	Running       int64         `json:"running,omitempty"`
	RunningSince  time.Time     `json:"running_since,omitzero"`
	RunningFor    time.Duration `json:"running_for,omitempty"`
	UsualDuration time.Duration `json:"usual_duration,omitempty"`
	SlowAfter     time.Duration `json:"slow_after,omitempty"`
}

// PartitionProgress is one partition's numbers in an observation.
type PartitionProgress struct {
	Topic        string        `json:"t"`
	Partition    int32         `json:"p"`
	Waiting      int64         `json:"w"`  // beyond the checkpoint; -1 unknown
	GroupWaiting int64         `json:"gw"` // beyond the documented group's commit; -1 unknown
	Oldest       time.Duration `json:"o,omitempty"`
	OldestKnown  bool          `json:"ok,omitempty"`
}

// SignalRun is a symptom's hysteresis: consecutive rounds it held, or was clear.
type SignalRun struct {
	Held    int       `json:"held"`
	Cleared int       `json:"cleared"`
	Active  bool      `json:"active"`
	Since   time.Time `json:"since,omitempty"` // when it became active
}

// DetectState is what detection keeps of a pipeline between rounds.
type DetectState struct {
	Runs map[Signal]*SignalRun `json:"runs"`
	// Incident is the incident the current (or last) episode is posted in; Own says
	// streamwatch opened it (rather than joined an alert's).
	Incident string `json:"incident,omitempty"`
	Own      bool   `json:"own,omitempty"`
	// Suppressed: a person resolved the incident while the symptom held; nothing more is
	// posted until the symptom recovers.
	Suppressed bool `json:"suppressed,omitempty"`
	// Noticed: with detect.open_incident off, the channel was told of the episode.
	Noticed bool `json:"noticed,omitempty"`
	// Waiting is the clock of records waiting beyond the checkpoint.
	Waiting HeldClock `json:"waiting,omitzero"`
	// Run is the query's runId as the driver log last named it: a new one is a restart.
	Run string `json:"run,omitempty"`
	// RetentionWarned: the channel was warned of this retention episode.
	RetentionWarned bool `json:"retention_warned,omitempty"`
	// Running is the clock of the batch in flight (batch_slow).
	Running BatchClock `json:"running,omitzero"`
}

// Active lists the active symptoms, in order.
func (s DetectState) Active() []Signal {
	var out []Signal
	for _, sym := range Signals {
		if r := s.Runs[sym]; r != nil && r.Active {
			out = append(out, sym)
		}
	}
	return out
}

// Change is what a round changed about a pipeline's symptoms.
type Change int

// The changes.
const (
	Unchanged Change = iota // nothing active before or after
	Began                   // a symptom became active, none was
	Grew                    // active before, and another symptom became active
	Persists                // active before and after, nothing new
	Recovered               // active before, none now
)

// Step applies one observation to the hysteresis: a symptom becomes active once it held
// holdRounds rounds in a row, and recovers once it was clear clearRounds rounds in a row; a
// round that could not judge it counts for neither. It returns the new state, the change and
// the symptoms that became active.
func Step(prev DetectState, obs Observation) (DetectState, Change, []Signal) {
	next := prev
	next.Runs = make(map[Signal]*SignalRun, len(Signals))
	before := prev.Active()
	var fresh []Signal
	for _, sym := range Signals {
		r := SignalRun{}
		if p := prev.Runs[sym]; p != nil {
			r = *p
		}
		if holds, known := obs.Holds[sym]; known {
			if holds {
				r.Held, r.Cleared = r.Held+1, 0
				if !r.Active && r.Held >= holdRounds {
					r.Active, r.Since = true, obs.At
					fresh = append(fresh, sym)
				}
			} else {
				r.Held, r.Cleared = 0, r.Cleared+1
				if r.Active && r.Cleared >= clearRounds {
					r.Active, r.Since = false, time.Time{}
				}
			}
		}
		next.Runs[sym] = &r
	}
	after := next.Active()
	switch {
	case len(before) == 0 && len(after) == 0:
		return next, Unchanged, nil
	case len(before) == 0:
		return next, Began, fresh
	case len(after) == 0:
		return next, Recovered, nil
	case len(fresh) > 0:
		return next, Grew, fresh
	}
	return next, Persists, nil
}

// LivenessGap says why detection does not watch a query's liveness. An observation an earlier
// version stored holds the reason in words instead.
type LivenessGap string

// The liveness gaps.
const (
	LivenessNoLog      LivenessGap = "no_log"     // no driver log is configured
	LivenessUnreadable LivenessGap = "unreadable" // the driver log could not be read (LivenessErr)
	LivenessNoBeat     LivenessGap = "no_beat"    // the log has no progress or idle line yet
)
