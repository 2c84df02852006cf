// Package human writes numbers and durations the way streamwatch shows them to people, in
// evidence (integrations, the pipeline judgment) and in replies (commands) alike.
package human

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Age writes a duration the way people say it: 45s, 7m30s (seconds under 10 minutes), 16m,
// 1h5m, 2d3h.
func Age(d time.Duration) string { return string(AppendAge(nil, d)) }

// AppendAge appends Age(d) to b.
func AppendAge(b []byte, d time.Duration) []byte {
	if d < 0 {
		d = 0
	}
	unit := func(n int64, u byte) { b = append(strconv.AppendInt(b, n, 10), u) }
	switch {
	case d < time.Minute:
		unit(int64(d/time.Second), 's')
	case d < time.Hour:
		m := int64(d / time.Minute)
		unit(m, 'm')
		if s := int64(d%time.Minute) / int64(time.Second); s != 0 && m < 10 {
			unit(s, 's')
		}
	case d < 48*time.Hour:
		unit(int64(d/time.Hour), 'h')
		if m := int64(d%time.Hour) / int64(time.Minute); m != 0 {
			unit(m, 'm')
		}
	default:
		unit(int64(d/(24*time.Hour)), 'd')
		if h := int64(d%(24*time.Hour)) / int64(time.Hour); h != 0 {
			unit(h, 'h')
		}
	}
	return b
}

// Count is n and its noun: "1 partition", "1,234 partitions".
func Count(n int, noun string) string {
	return Digits(int64(n)) + " " + Noun(n, noun)
}

// Noun is noun, plural unless n is 1: "partitions", "batches".
func Noun(n int, noun string) string {
	switch {
	case n == 1:
		return noun
	case strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s"):
		return noun + "es"
	}
	return noun + "s"
}

// Plural is "s" unless n is 1, for a noun written in a format: "%d alert%s".
func Plural[T ~int | ~int64](n T) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Time writes a moment to the second, in the zone people read (SetZone): "2026-11-30
// 10:41:05 UTC", "2026-11-30 11:41:05 CET".
func Time(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	t = t.In(Zone())
	if Zone() == time.UTC {
		return t.Format("2006-01-02 15:04:05 UTC")
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

// Stamp writes a moment to the second, in the zone people read: "2026-11-30 10:41:05Z" in
// UTC, "2026-11-30 11:41:05 CET" elsewhere; "-" for none.
func Stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if Zone() == time.UTC {
		return t.UTC().Format("2006-01-02 15:04:05Z")
	}
	return t.In(Zone()).Format("2006-01-02 15:04:05 MST")
}

// StampMilli is Stamp to the millisecond, for times that differ by less than a second (a
// file's modification before and after a change): "2026-11-30 10:41:05.123Z"; "-" for none.
func StampMilli(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if Zone() == time.UTC {
		return t.UTC().Format("2006-01-02 15:04:05.000Z")
	}
	return t.In(Zone()).Format("2006-01-02 15:04:05.000 MST")
}

// Clock writes a time of day to the second, in the zone people read: "10:41:05Z" in UTC,
// "11:41:05 CET" elsewhere; "-" for none.
func Clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if Zone() == time.UTC {
		return t.UTC().Format("15:04:05Z")
	}
	return t.In(Zone()).Format("15:04:05 MST")
}

// Minute writes a moment to the minute, in the zone people read: "2026-11-30 10:41Z" in UTC,
// "2026-11-30 11:41 CET" elsewhere.
func Minute(t time.Time) string {
	if Zone() == time.UTC {
		return t.UTC().Format("2006-01-02 15:04Z")
	}
	return t.In(Zone()).Format("2006-01-02 15:04 MST")
}

// zone is where people read times (slack.time_zone); nil: UTC.
var zone atomic.Pointer[time.Location]

// SetZone sets the time zone every time people read is written in (slack.time_zone, set at
// start and on a reload); nil is UTC. It is one setting for the process, as the
// configuration is.
func SetZone(loc *time.Location) {
	if loc != nil && loc.String() == "UTC" {
		loc = time.UTC
	}
	zone.Store(loc)
}

// Zone is the time zone people read times in (UTC unless SetZone said otherwise).
func Zone() *time.Location {
	if loc := zone.Load(); loc != nil {
		return loc
	}
	return time.UTC
}

// Elapsed writes a duration with its seconds under an hour: 45s, 12m5s, 3h4m, 2d3h.
func Elapsed(d time.Duration) string {
	if d < 0 {
		return "-" + Elapsed(-d)
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	}
}

// Digits writes n with thousands separators: 12,345.
func Digits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if len(s) <= 3 {
		if neg {
			return "-" + s
		}
		return s
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 && !(neg && b.Len() == 1) {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// Took writes how long something took: "850µs", "12.3ms", "2.5s", "25m", "1h30m", "3d4h".
func Took(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < time.Millisecond:
		s = d.Round(time.Microsecond).String()
	case d < time.Second:
		s = d.Round(100 * time.Microsecond).String()
	case d < time.Minute:
		s = d.Round(100 * time.Millisecond).String()
	case d >= 48*time.Hour:
		d = d.Round(time.Hour)
		days, hours := d/(24*time.Hour), d%(24*time.Hour)/time.Hour
		s = fmt.Sprintf("%dd", days)
		if hours > 0 {
			s += fmt.Sprintf("%dh", hours)
		}
	default:
		s = d.Round(time.Second).String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Bytes writes a file's size: "1 byte", "312 bytes", "24 KiB", "31 MiB".
func Bytes(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 10<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 10<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d MiB", n>>20)
	}
}
