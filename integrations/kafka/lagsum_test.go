package kafka_test

import (
	"testing"

	"github.com/streamwatch/streamwatch/integrations/kafka"
)

// TestSumLag: the one lag sum adds the known lags and counts them; a partition without a
// commit or a log end adds nothing, whichever form it comes in.
func TestSumLag(t *testing.T) {
	report := []kafka.PartitionLag{{Lag: 5}, {Lag: 0}, {Lag: -1}, {Lag: 7}}
	if lag, known := kafka.SumLag(report); lag != 12 || known != 3 {
		t.Errorf("report: lag %d of %d known, want 12 of 3", lag, known)
	}
	statuses := []kafka.PartitionStatus{{Lag: -1}, {Lag: -1}}
	if lag, known := kafka.SumLag(statuses); lag != 0 || known != 0 {
		t.Errorf("statuses without commits: lag %d of %d known, want 0 of 0", lag, known)
	}
	samples := []kafka.PartitionSample{{Committed: 10, LogEnd: 15}, {Committed: kafka.NoOffset, LogEnd: 100},
		{Committed: 20, LogEnd: 18}, {Committed: kafka.UnknownOffset, LogEnd: kafka.UnknownOffset}}
	if lag, known := kafka.SumLag(samples); lag != 5 || known != 2 {
		t.Errorf("samples: lag %d of %d known, want 5 of 2 (a truncated log adds 0)", lag, known)
	}
}
