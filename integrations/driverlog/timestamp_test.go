package driverlog

import (
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	tests := []struct {
		line string
		want time.Time // zero: not a timestamp
	}{
		{"26/11/30 10:41:05 INFO MicroBatchExecution: x", time.Date(2026, 11, 30, 10, 41, 5, 0, cet)},
		{"26/11/30 10:41:05", time.Date(2026, 11, 30, 10, 41, 5, 0, cet)},
		{"2026-11-30 10:41:05,123 ERROR x", time.Date(2026, 11, 30, 10, 41, 5, 123e6, cet)},
		{"2026-11-30 10:41:05.123 ERROR x", time.Date(2026, 11, 30, 10, 41, 5, 123e6, cet)},
		{"2026-11-30 10:41:05 ERROR x", time.Date(2026, 11, 30, 10, 41, 5, 0, cet)},
		{"2026-11-30T10:41:05.123Z ERROR x", time.Date(2026, 11, 30, 10, 41, 5, 123e6, time.UTC)},
		{"2026-11-30T10:41:05.123456789Z x", time.Date(2026, 11, 30, 10, 41, 5, 123456789, time.UTC)},
		{"2026-11-30T10:41:05+02:00 x", time.Date(2026, 11, 30, 8, 41, 5, 0, time.UTC)},
		{"2026-11-30T10:41:05.5-0130 x", time.Date(2026, 11, 30, 12, 11, 5, 5e8, time.UTC)},
		{"2026-11-30T10:41:05", time.Date(2026, 11, 30, 10, 41, 5, 0, cet)},
		{`{"ts":"2026-11-30T10:41:05.123Z","level":"ERROR"}`, time.Date(2026, 11, 30, 10, 41, 5, 123e6, time.UTC)},
		{"[2026-11-30 10:41:05] x", time.Time{}},
		{"26/13/30 10:41:05 INFO x", time.Time{}},
		{"26/02/30 10:41:05 INFO x", time.Time{}},
		{"26/11/30 24:00:00 INFO x", time.Time{}},
		{"26/11/30 10:41:05X", time.Time{}},
		{"2026-11-30 10:41", time.Time{}},
		{"2026-11-30T10:41:05.Z", time.Time{}},
		{"2026-11-30T10:41:05+2", time.Time{}},
		{"2026-11-30T10:41:05+25:00", time.Time{}},
		{"2026-11-30T10:41:05zulu", time.Time{}},
		{`{"ts":"2026-11-30T10:41:05.123Zjunk"}`, time.Time{}},
		{`{"ts":"2026-11-30`, time.Time{}},
		{"\tat org.apache.spark.Foo(Foo.scala:1)", time.Time{}},
		{"Caused by: java.io.IOException", time.Time{}},
		{"", time.Time{}},
	}
	for _, tt := range tests {
		got, ok := parseTimestamp([]byte(tt.line), cet)
		if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
			t.Errorf("parseTimestamp(%q) = %v, %v; want %v", tt.line, got, ok, tt.want)
		}
	}
}
