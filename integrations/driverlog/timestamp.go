package driverlog

import (
	"bytes"
	"time"
)

// parseTimestamp reads the timestamp a log line starts with, in one of the
// forms Spark's log4j templates and structured logging write:
//
//	25/11/30 10:41:05 INFO ...                 (Spark's default "yy/MM/dd HH:mm:ss")
//	2026-11-30 10:41:05,123 ERROR ...          (ISO-8601 log4j, "," or "." before millis)
//	2026-11-30T10:41:05.123Z ...               (ISO-8601 with T, optional zone)
//	{"ts":"2026-11-30T10:41:05.123Z",...}      (Spark 4 structured JSON logging)
//
// Times without a zone are in loc. It reports false for anything else,
// including impossible dates, and never reads more than ~40 bytes.
func parseTimestamp(line []byte, loc *time.Location) (time.Time, bool) {
	if bytes.HasPrefix(line, []byte(`{"ts":"`)) {
		rest := line[len(`{"ts":"`):]
		end := bytes.IndexByte(rest[:min(len(rest), 40)], '"')
		if end < 0 {
			return time.Time{}, false
		}
		t, n, ok := parseISO(rest[:end], loc)
		return t, ok && n == end
	}
	if t, ok := parseLog4j(line, loc); ok {
		return t, true
	}
	t, _, ok := parseISO(line, loc)
	return t, ok
}

// parseLog4j reads "yy/MM/dd HH:mm:ss" followed by the end or a space.
func parseLog4j(b []byte, loc *time.Location) (time.Time, bool) {
	const layout = "yy/MM/dd HH:mm:ss"
	if len(b) < len(layout) || (len(b) > len(layout) && b[len(layout)] != ' ') {
		return time.Time{}, false
	}
	if b[2] != '/' || b[5] != '/' || b[8] != ' ' || b[11] != ':' || b[14] != ':' {
		return time.Time{}, false
	}
	yy, ok1 := digits(b[0:2])
	mo, ok2 := digits(b[3:5])
	dd, ok3 := digits(b[6:8])
	hh, ok4 := digits(b[9:11])
	mi, ok5 := digits(b[12:14])
	ss, ok6 := digits(b[15:17])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return time.Time{}, false
	}
	return date(2000+yy, mo, dd, hh, mi, ss, 0, loc)
}

// parseISO reads "yyyy-MM-dd[ T]HH:mm:ss[(,|.)fraction][Z|±hh:mm|±hhmm]"
// and returns the time and how many bytes it used. What follows must be the
// end, a space or a closing bracket-like separator.
func parseISO(b []byte, loc *time.Location) (time.Time, int, bool) {
	const base = "2006-01-02T15:04:05"
	if len(b) < len(base) {
		return time.Time{}, 0, false
	}
	if b[4] != '-' || b[7] != '-' || (b[10] != ' ' && b[10] != 'T') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, 0, false
	}
	yyyy, ok1 := digits(b[0:4])
	mo, ok2 := digits(b[5:7])
	dd, ok3 := digits(b[8:10])
	hh, ok4 := digits(b[11:13])
	mi, ok5 := digits(b[14:16])
	ss, ok6 := digits(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return time.Time{}, 0, false
	}
	n := len(base)
	nsec := 0
	if n < len(b) && (b[n] == ',' || b[n] == '.') {
		start := n + 1
		end := start
		for end < len(b) && end-start < 9 && isDigit(b[end]) {
			end++
		}
		if end == start {
			return time.Time{}, 0, false
		}
		frac, _ := digits(b[start:end])
		for i := end - start; i < 9; i++ {
			frac *= 10
		}
		nsec = frac
		n = end
	}
	if n < len(b) {
		switch c := b[n]; {
		case c == 'Z':
			loc = time.UTC
			n++
		case c == '+' || c == '-':
			offset, used, ok := parseOffset(b[n:])
			if !ok {
				return time.Time{}, 0, false
			}
			if c == '-' {
				offset = -offset
			}
			loc = time.FixedZone("", offset)
			n += used
		}
	}
	if n < len(b) && b[n] != ' ' && b[n] != '\t' && b[n] != ']' && b[n] != '|' {
		return time.Time{}, 0, false
	}
	t, ok := date(yyyy, mo, dd, hh, mi, ss, nsec, loc)
	return t, n, ok
}

// parseOffset reads "+hh:mm", "+hhmm" or "+hh" and returns seconds east of UTC.
func parseOffset(b []byte) (int, int, bool) {
	if len(b) < 3 {
		return 0, 0, false
	}
	hh, ok := digits(b[1:3])
	if !ok || hh > 18 {
		return 0, 0, false
	}
	used, mm := 3, 0
	switch {
	case len(b) >= 6 && b[3] == ':':
		mm, ok = digits(b[4:6])
		used = 6
	case len(b) >= 5 && isDigit(b[3]):
		mm, ok = digits(b[3:5])
		used = 5
	}
	if !ok || mm > 59 {
		return 0, 0, false
	}
	return hh*3600 + mm*60, used, true
}

// date builds a time and rejects fields time.Date would silently normalise.
func date(year, month, day, hour, minute, sec, nsec int, loc *time.Location) (time.Time, bool) {
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	if t.Day() != day { // 30 February and friends
		return time.Time{}, false
	}
	return t, true
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(b) > 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
