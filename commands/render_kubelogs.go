package commands

import (
	"fmt"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
)

// podNote words which driver pod, of those the label selector matched, a log is from, and
// which run of its container (integrations/kubelogs chooses them).
func podNote(n driverlog.PodNote) string {
	of := fmt.Sprintf("%d pods matching %s", n.Pods, n.Selector)
	if n.Pods == 1 {
		of = "the only pod matching " + n.Selector
	}
	switch n.Choice {
	case driverlog.PodRunning:
		if n.Pods == 1 {
			return of + ", running"
		}
		return "the newest running of " + of
	case driverlog.PodNoneRunning:
		phase := n.Phase
		if phase == "" {
			phase = "phase unknown"
		}
		if n.Pods == 1 {
			return fmt.Sprintf("%s, %s: none is running", of, phase)
		}
		return fmt.Sprintf("the newest of %s (%s): none is running", of, phase)
	case driverlog.PodPrevious:
		restarts := "restarted once"
		if n.Restarts != 1 {
			restarts = fmt.Sprintf("restarted %d times", n.Restarts)
		}
		s := "the run before the last restart (" + restarts + ")"
		if n.Ended {
			s += fmt.Sprintf(", which ended with exit code %d", n.ExitCode)
			if n.Reason != "" {
				s += " (" + n.Reason + ")"
			}
		}
		return s
	}
	return string(n.Choice)
}
