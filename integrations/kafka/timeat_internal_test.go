package kafka

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestTimeAtSaysWhyNoTime: a fetch answer without the record's timestamp says why as a code
// (the lag reply words it), with the broker's own error where it sent one.
func TestTimeAtSaysWhyNoTime(t *testing.T) {
	at := time.Date(2026, 12, 5, 3, 12, 0, 0, time.UTC)
	withRecord := &sarama.FetchResponseBlock{Err: sarama.ErrNoError, RecordsSet: []*sarama.Records{{RecordBatch: &sarama.RecordBatch{
		FirstOffset: 10, FirstTimestamp: at, Records: []*sarama.Record{{OffsetDelta: 0}, {OffsetDelta: 1, TimestampDelta: time.Second}}}}}}
	for _, tt := range []struct {
		name  string
		block *sarama.FetchResponseBlock
		want  recordTime
	}{
		{"no block", nil, recordTime{noTime: NoTimeNoPartition}},
		{"out of range", &sarama.FetchResponseBlock{Err: sarama.ErrOffsetOutOfRange}, recordTime{noTime: NoTimeOutOfRange}},
		{"broker error", &sarama.FetchResponseBlock{Err: sarama.ErrNotLeaderForPartition},
			recordTime{noTime: NoTimeBrokerError, err: sarama.ErrNotLeaderForPartition.Error()}},
		{"no record", &sarama.FetchResponseBlock{Err: sarama.ErrNoError}, recordTime{noTime: NoTimeNoRecord}},
		{"the record", withRecord, recordTime{at: at.Add(time.Second)}},
	} {
		offset := int64(11)
		if got := timeAt(tt.block, offset); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
