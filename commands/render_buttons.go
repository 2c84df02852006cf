package commands

// The words on buttons: an incident root's, and those of command replies. The renderer wires
// each button to its command; these are what people read on them.

// Labels and questions of buttons.
const (
	LabelAck       = "Acknowledge"
	LabelUnack     = "Unacknowledge"
	LabelResolve   = "Resolve"
	LabelDiagnose  = "Diagnose again"
	LabelUnsilence = "End silence"
	LabelCancel    = "Cancel"
	// LabelRun is a reply's button that has no label of its own.
	LabelRun = "Run"
	// ConfirmTitle and ConfirmText ask before a reply's button that asks without saying what.
	ConfirmTitle = "Are you sure?"
	ConfirmText  = "Go ahead?"
	// ReplyCut ends a reply that did not fit one message; NoAnswer stands for a reply with
	// nothing in it.
	ReplyCut = "(reply cut: too long for one message)"
	NoAnswer = "(no answer)"
)

// ResolveConfirm is what the Resolve button of incident id asks first.
func ResolveConfirm(id string) (title, text string) {
	return "Resolve " + id + "?", "Later alerts with its key open a new incident."
}

// SilenceChoice is one entry of a root's silence menu: its label, and how long
// (`incident silence ID for 1h`, or `until morning`).
type SilenceChoice struct{ Label, For string }

// SilenceChoices are a root's silence menu, shortest first.
var SilenceChoices = []SilenceChoice{
	{"Silence 15 min", "15m"},
	{"Silence 1 h", "1h"},
	{"Silence 4 h", "4h"},
	{"Silence until the next working morning", "morning"},
}

// LinkKind is a kind of an alert's own link and the label of its button.
type LinkKind struct{ Kind, Label string }

// LinkKinds are the kinds of links, in the order the root shows them.
var LinkKinds = []LinkKind{
	{"runbook", "Runbook"},
	{"dashboard", "Dashboard"},
	{"panel", "Panel"},
	{"generator", "Alert source"},
	{"silence", "Silence in Grafana"},
}
