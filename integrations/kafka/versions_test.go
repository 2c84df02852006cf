package kafka

import (
	"testing"

	"github.com/IBM/sarama"
)

// TestRequestVersionsNewestFirst: requestVersion takes the first row a cluster is at least, so
// each request's rows must run from the newest release to the oldest, versions falling.
func TestRequestVersionsNewestFirst(t *testing.T) {
	for a, rows := range requestVersions {
		for i := 1; i < len(rows); i++ {
			if !rows[i-1].kafka.IsAtLeast(rows[i].kafka) || rows[i-1].kafka == rows[i].kafka || rows[i-1].version <= rows[i].version {
				t.Errorf("%s: row %d (%s v%d) after row %d (%s v%d)", a, i, rows[i].kafka, rows[i].version, i-1, rows[i-1].kafka, rows[i-1].version)
			}
		}
	}
}

// TestRequestVersion: what a cluster of each version is sent.
func TestRequestVersion(t *testing.T) {
	for _, c := range []struct {
		kafka sarama.KafkaVersion
		a     api
		want  int16
	}{
		{sarama.V3_6_0_0, apiFetch, 12},
		{sarama.V2_2_0_0, apiFetch, 10},
		{sarama.V0_10_0_0, apiFetch, 0},
		{sarama.V3_6_0_0, apiListGroups, 4}, // never v5 (KIP-848's type filter)
		{sarama.V2_8_0_0, apiOffsetFetch, 2},
		{sarama.V3_0_0_0, apiOffsetFetch, 8},
		{sarama.V0_10_1_0, apiOffsetFetch, 0},
	} {
		if got := requestVersion(c.a, c.kafka); got != c.want {
			t.Errorf("%s to Kafka %s: v%d, want v%d", c.a, c.kafka, got, c.want)
		}
	}
}
