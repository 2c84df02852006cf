package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// scheduleParser accepts 5 fields, 6 with seconds first, descriptors such as "@every 5m" and
// "@daily", and a CRON_TZ= or TZ= prefix.
var scheduleParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom |
	cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses a schedule the way streamwatch does everywhere (probe.schedule,
// health.digest_schedule): a robfig/cron spec of 5 fields, or 6 with seconds first,
// descriptors such as "@every 5m", and an optional CRON_TZ=Area/City prefix. A spec that can
// never fire (such as "0 0 30 2 *") is an error.
func ParseSchedule(spec string) (cron.Schedule, error) {
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		// cron v3.0.1 panics on a time-zone prefix with nothing after it.
		if !strings.Contains(spec, " ") {
			return nil, errors.New("a CRON_TZ= prefix must be followed by a schedule")
		}
	}
	sched, err := parseCron(spec)
	if err != nil {
		return nil, err
	}
	// Any fixed instant will do: a spec that never fires never fires from any instant.
	if sched.Next(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, errors.New("the schedule never fires")
	}
	return sched, nil
}

func parseCron(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("malformed schedule: %v", r)
		}
	}()
	return scheduleParser.Parse(spec)
}
