package pipeline

import "time"

// MessageKind says which of detection's messages a Message is.
type MessageKind string

// Detection's messages. Each names the fields of Message it uses besides Pipeline and
// Observation.
const (
	// MsgTitle is the title of the incident streamwatch opens (Signals: the active symptoms).
	MsgTitle MessageKind = "title"
	// MsgDetected is the root's symptom line, edited every round (Signals: the symptoms that
	// hold).
	MsgDetected MessageKind = "detected"
	// MsgClearing is the root's line while every active symptom is clear but not yet for
	// ClearRounds rounds (Signals: the active symptoms).
	MsgClearing MessageKind = "clearing"
	// MsgAgain is the thread note when a symptom returns to the pipeline's still-open incident
	// (Signals: the active symptoms).
	MsgAgain MessageKind = "again"
	// MsgNowAlso is the thread note when another symptom joins (Signals: the new ones).
	MsgNowAlso MessageKind = "now_also"
	// MsgNotice is the channel's notice of an episode when detect.open_incident is off
	// (Signals: the active symptoms).
	MsgNotice MessageKind = "notice"
	// MsgRecovered is the incident's note when every symptom is clear.
	MsgRecovered MessageKind = "recovered"
	// MsgRecoveredNotice is the channel's notice of it when detect.open_incident is off.
	MsgRecoveredNotice MessageKind = "recovered_notice"
	// MsgRestarted is the thread note when the driver log names a new runId (Run, PrevRun;
	// Observation.BeatAt is when it was seen).
	MsgRestarted MessageKind = "restarted"
	// MsgRetentionWarning is the channel's warning when unread records pass
	// detect.retention_warning of their topic's retention.
	MsgRetentionWarning MessageKind = "retention_warning"
	// MsgPublishRewound is the channel's notice when the checkpoint went back and the publish
	// group followed it (Group, Batch, Rewound).
	MsgPublishRewound MessageKind = "publish_rewound"
)

// ClearRounds is how many clear rounds in a row a symptom needs to recover.
const ClearRounds = clearRounds

// Message is one thing detection posts, as data: commands words it (Detector.Words).
type Message struct {
	Kind        MessageKind
	Pipeline    string
	Signals     []Signal
	Observation Observation
	// A restart: the new runId and the one before.
	Run, PrevRun string
	// A publish group that followed its checkpoint back: the group, the checkpoint's batch and
	// the partitions moved back.
	Group   string
	Batch   int64
	Rewound []Rewind
}

// Rewind is one partition of the publish group moved back with the checkpoint.
type Rewind struct {
	Partition string // "topic/partition"
	From, To  int64
}

// words is the Words a Detector without one uses: the message's kind and pipeline, so that
// nothing is lost, and no sentence is made here.
func words(m Message) string {
	return string(m.Kind) + " " + m.Pipeline + " " + m.Observation.At.UTC().Format(time.RFC3339)
}
