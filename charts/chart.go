// Package charts draws a pipeline's progress chart as a PNG: records waiting beyond the
// checkpoint and the documented group's lag on one panel, the oldest waiting record's age on a
// second panel below it, checkpoint commits as ticks, probe results as marks, the incident's
// events as labelled vertical lines and the stall shaded. It draws the plain data it is given
// (Chart) and reads nothing else; the alt text that goes with a chart is written where the
// other replies are (commands/render_chart.go).
package charts

import (
	"time"
)

// The size of every chart, in pixels: 16:9, large enough for Slack's full view and drawn with
// type big enough to read when Slack shows it as a preview (about 360 pixels high).
const (
	Width  = 800
	Height = 450
)

// Chart is what a chart shows: a pipeline's samples from From to To, with its checkpoint
// commits, probe results, incident events and stall. It is plain data: it travels through the
// outbox as JSON and is drawn when delivered.
type Chart struct {
	Pipeline string    `json:"pipeline"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	// TimeZone is the IANA name of the time axis's zone ("" is UTC).
	TimeZone string   `json:"tz,omitempty"`
	Points   []Point  `json:"points,omitempty"`
	Commits  []Commit `json:"commits,omitempty"`
	Probes   []Probe  `json:"probes,omitempty"`
	Events   []Event  `json:"events,omitempty"`
	// Stall is the shaded span during which the checkpoint made no progress while records
	// waited; nil for none.
	Stall *Span `json:"stall,omitempty"`
}

// Point is one progress sample. A negative number is unknown and leaves a gap in its line.
type Point struct {
	At time.Time `json:"t"`
	// Waiting is the records the brokers hold beyond the checkpoint's offsets.
	Waiting int64 `json:"w"`
	// GroupLag is the documented consumer group's lag.
	GroupLag int64 `json:"g"`
	// Oldest is the age of the oldest waiting record, in seconds.
	Oldest int64 `json:"o"`
}

// Commit is a checkpoint commit: when the batch was committed.
type Commit struct {
	At    time.Time `json:"t"`
	Batch int64     `json:"b"`
}

// Probe is a checkpoint-access probe's result.
type Probe struct {
	At time.Time `json:"t"`
	OK bool      `json:"ok"`
}

// EventKind is what an incident event marks; each kind has its colour.
type EventKind string

// The events a chart marks.
const (
	Opened       EventKind = "opened"
	Acknowledged EventKind = "acknowledged"
	Fixed        EventKind = "fixed" // a checkpoint repair or restore
	Recovered    EventKind = "recovered"
)

// Event is an incident event, drawn as a vertical line with Label above it.
type Event struct {
	At    time.Time `json:"t"`
	Kind  EventKind `json:"k"`
	Label string    `json:"l"`
}

// Span is a stretch of time; a zero To lasts to the chart's end.
type Span struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to,omitzero"`
}

// Location is the chart's time zone (UTC when TimeZone is empty or unknown).
func (c Chart) Location() *time.Location {
	if c.TimeZone == "" {
		return time.UTC
	}
	if loc, err := time.LoadLocation(c.TimeZone); err == nil {
		return loc
	}
	return time.UTC
}

// ZoneName is how the title names the time zone.
func (c Chart) ZoneName() string {
	if c.TimeZone == "" {
		return "UTC"
	}
	return c.TimeZone
}
