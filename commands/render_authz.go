package commands

import "fmt"

// notAllowedText words a refusal (ErrNotAllowed): its own reason, or who may do the action and
// why the asker is not among them.
func notAllowedText(e *ErrNotAllowed) string {
	switch {
	case e.Reason != "":
		return e.Reason
	case e.Nobody && e.Pipeline == "":
		return "nobody may " + e.Action + ": slack.remediators names nobody"
	case e.Nobody:
		return fmt.Sprintf("nobody may %s: no remediator is named for %s (slack.remediators, pipelines[%s].remediators)", e.Action, e.Pipeline, e.Pipeline)
	case e.Pipeline == "":
		return "only the people listed in slack.remediators may " + e.Action
	}
	return fmt.Sprintf("only the people listed in slack.remediators or pipelines[%s].remediators may %s", e.Pipeline, e.Action)
}

// notMemberText is the reason an incident of another channel is refused (maySee).
func notMemberText(id string) string {
	return id + " belongs to a channel you are not a member of"
}

// orAll names a pipeline, or all of them for "".
func orAll(p string) string {
	if p == "" {
		return "every pipeline"
	}
	return p
}
