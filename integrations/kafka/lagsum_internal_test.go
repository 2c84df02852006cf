package kafka

import "testing"

// TestTotalsAgreeWithSumLag: a lag report's total is SumLag over its partitions, and every
// partition SumLag leaves out is counted as without a commit or unknown, so the reply's
// "lag N, K without commit, U unknown" accounts for every partition once.
func TestTotalsAgreeWithSumLag(t *testing.T) {
	ps := []PartitionLag{
		{Partition: 0, LogEnd: 100, Committed: 40, Lag: 60},
		{Partition: 1, LogEnd: 100, Committed: 100, Lag: 0},
		{Partition: 2, LogEnd: 100, Committed: NoOffset, Lag: -1},
		{Partition: 3, LogEnd: UnknownOffset, Committed: 10, Lag: -1},
		{Partition: 4, LogEnd: 50, Committed: UnknownOffset, Lag: -1},
		{Partition: 5, LogEnd: 70, Committed: 65, Lag: 5},
	}
	got := totals(ps)
	lag, known := SumLag(ps)
	if got.Lag != lag || got.Lag != 65 {
		t.Errorf("totals lag %d, SumLag %d, want both 65", got.Lag, lag)
	}
	if got.NoCommit != 1 || got.Unknown != 2 || known+got.NoCommit+got.Unknown != got.Partitions || got.Partitions != 6 {
		t.Errorf("totals %+v with %d known: want 1 without commit, 2 unknown, 3 known of 6", got, known)
	}
}
