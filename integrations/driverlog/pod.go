package driverlog

// PodNote says which pod, of those a label selector matched, a Source's log is from, and which
// run of its container: data that commands words (commands/render_kubelogs.go).
type PodNote struct {
	Choice   PodChoice `json:"choice"`
	Selector string    `json:"selector,omitempty"`  // the label selector (PodRunning, PodNoneRunning)
	Pods     int       `json:"pods,omitempty"`      // how many pods it matched
	Phase    string    `json:"phase,omitempty"`     // PodNoneRunning: the chosen pod's phase, "" when unknown
	Restarts int32     `json:"restarts,omitempty"`  // PodPrevious: how often the container restarted
	Ended    bool      `json:"ended,omitempty"`     // PodPrevious: how the previous run ended is known
	ExitCode int32     `json:"exit_code,omitempty"` // PodPrevious, Ended: its exit code
	Reason   string    `json:"reason,omitempty"`    // PodPrevious, Ended: the kubelet's reason (Error, OOMKilled), or ""
}

// PodChoice says why a pod's log was read.
type PodChoice string

// The choices, with the PodNote fields each uses.
const (
	// PodRunning: the newest running pod of the Pods that Selector matched.
	PodRunning PodChoice = "running"
	// PodNoneRunning: the newest pod of the Pods that Selector matched, none of them running
	// (Phase).
	PodNoneRunning PodChoice = "none_running"
	// PodPrevious: the run of the chosen pod's container before its last restart (Restarts;
	// Ended, ExitCode, Reason).
	PodPrevious PodChoice = "previous"
)
