package commands

import (
	"testing"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
)

// TestPodNote: every way a driver pod's log is chosen, worded in full.
func TestPodNote(t *testing.T) {
	const sel = "spark-role=driver,spark-app-name=sms-replies"
	cases := []struct {
		note driverlog.PodNote
		want string
	}{
		{driverlog.PodNote{Choice: driverlog.PodRunning, Selector: sel, Pods: 1}, "the only pod matching " + sel + ", running"},
		{driverlog.PodNote{Choice: driverlog.PodRunning, Selector: sel, Pods: 2}, "the newest running of 2 pods matching " + sel},
		{driverlog.PodNote{Choice: driverlog.PodNoneRunning, Selector: sel, Pods: 1, Phase: "Succeeded"}, "the only pod matching " + sel + ", Succeeded: none is running"},
		{driverlog.PodNote{Choice: driverlog.PodNoneRunning, Selector: sel, Pods: 1}, "the only pod matching " + sel + ", phase unknown: none is running"},
		{driverlog.PodNote{Choice: driverlog.PodNoneRunning, Selector: sel, Pods: 2, Phase: "Failed"}, "the newest of 2 pods matching " + sel + " (Failed): none is running"},
		{driverlog.PodNote{Choice: driverlog.PodNoneRunning, Selector: sel, Pods: 3}, "the newest of 3 pods matching " + sel + " (phase unknown): none is running"},
		{driverlog.PodNote{Choice: driverlog.PodPrevious, Restarts: 1}, "the run before the last restart (restarted once)"},
		{driverlog.PodNote{Choice: driverlog.PodPrevious, Restarts: 4, Ended: true, ExitCode: 137, Reason: "OOMKilled"},
			"the run before the last restart (restarted 4 times), which ended with exit code 137 (OOMKilled)"},
		{driverlog.PodNote{Choice: driverlog.PodPrevious, Restarts: 1, Ended: true}, "the run before the last restart (restarted once), which ended with exit code 0"},
	}
	for _, c := range cases {
		if got := podNote(c.note); got != c.want {
			t.Errorf("%+v: got %q\n\twant %q", c.note, got, c.want)
		}
	}
}
