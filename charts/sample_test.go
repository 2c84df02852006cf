package charts

import (
	"time"
)

// sampleChart is a six-hour chart of a pipeline that stalled at 13:20 and recovered at 14:10.
func sampleChart() Chart {
	to := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC)
	from := to.Add(-6 * time.Hour)
	stallAt := time.Date(2026, 12, 5, 13, 20, 0, 0, time.UTC)
	recoveredAt := time.Date(2026, 12, 5, 14, 10, 0, 0, time.UTC)
	var c = Chart{Pipeline: "sms-replies", From: from, To: to, TimeZone: "UTC"}
	for t := from; !t.After(to); t = t.Add(time.Minute) {
		p := Point{At: t, Waiting: 12, GroupLag: 10, Oldest: 20}
		switch {
		case t.After(stallAt) && t.Before(recoveredAt):
			m := int64(t.Sub(stallAt) / time.Minute)
			p.Waiting, p.GroupLag, p.Oldest = 12+m*30, 10+m*29, int64(t.Sub(stallAt)/time.Second)
		case !t.Before(recoveredAt) && t.Before(recoveredAt.Add(10*time.Minute)):
			m := int64(recoveredAt.Add(10*time.Minute).Sub(t) / time.Minute)
			p.Waiting, p.GroupLag, p.Oldest = m*150, m*148, m*60
		default:
			c.Commits = append(c.Commits, Commit{At: t, Batch: int64(t.Sub(from) / time.Minute)})
		}
		c.Points = append(c.Points, p)
	}
	for t := from; t.Before(to); t = t.Add(30 * time.Minute) {
		c.Probes = append(c.Probes, Probe{At: t, OK: !(t.After(stallAt) && t.Before(recoveredAt))})
	}
	c.Stall = &Span{From: stallAt, To: recoveredAt}
	c.Events = []Event{
		{At: stallAt.Add(11 * time.Minute), Kind: Opened, Label: "INC-7 opened"},
		{At: stallAt.Add(16 * time.Minute), Kind: Acknowledged, Label: "acknowledged"},
		{At: stallAt.Add(41 * time.Minute), Kind: Fixed, Label: "repaired"},
		{At: recoveredAt.Add(2 * time.Minute), Kind: Recovered, Label: "recovered"},
	}
	return c
}
