package kafka

// Lagged is a partition whose lag may be known: a report's PartitionLag, an evaluation's
// PartitionStatus, a stored PartitionSample.
type Lagged interface {
	// KnownLag is the records the group has yet to read on the partition, and whether that
	// is known (a commit and a log end).
	KnownLag() (int64, bool)
}

// SumLag is the lag of a set of partitions, the one sum streamwatch makes of it (the lag
// report's totals, each group of the groups report, the evaluator's summary, detection, the
// gauge, the recovery watch, the digest's trend): the known lags added up, and how many
// partitions had one. A partition without a commit adds nothing.
func SumLag[P Lagged](ps []P) (total int64, known int) {
	for _, p := range ps {
		if l, ok := p.KnownLag(); ok {
			total += l
			known++
		}
	}
	return total, known
}

// KnownLag is the partition's lag (LogEnd - Committed), unknown without a commit or a log end.
func (p PartitionLag) KnownLag() (int64, bool) { return max(p.Lag, 0), p.Lag >= 0 }

// KnownLag is the lag at the latest sample, unknown without a commit.
func (p PartitionStatus) KnownLag() (int64, bool) { return max(p.Lag, 0), p.Lag >= 0 }

// KnownLag is the lag the sample saw, unknown without a commit.
func (s PartitionSample) KnownLag() (int64, bool) {
	if s.Committed < 0 {
		return 0, false
	}
	return max(s.LogEnd-s.Committed, 0), true
}
