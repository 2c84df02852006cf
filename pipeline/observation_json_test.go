package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestObservationGroupSummaryJSON: an observation stores the evaluator's summary as data under
// group_summary, and one an earlier version stored with its words under group_evidence still
// reads back with them.
func TestObservationGroupSummaryJSON(t *testing.T) {
	sum := kafka.Summary{Status: kafka.StatusStalled, Judged: 3, Same: 1, Unknown: 1, Worst: kafka.PartitionVerdict{Topic: "sms", Partition: 2, Committed: 90, LogEnd: 500, Lag: 410, Evidence: kafka.Evidence{Rule: kafka.RuleStalled, For: 5 * time.Minute, Grew: 10}}}
	b, err := json.Marshal(pipeline.Observation{GroupStatus: "STALLED", GroupSummary: &sum})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"group_summary":`) || strings.Contains(string(b), `"group_evidence"`) {
		t.Errorf("stored %s", b)
	}
	var back pipeline.Observation
	if err := json.Unmarshal(b, &back); err != nil || back.GroupSummary == nil || *back.GroupSummary != sum {
		t.Errorf("read back %+v (%v), want %+v", back.GroupSummary, err, sum)
	}
	var old pipeline.Observation
	if err := json.Unmarshal([]byte(`{"group":"g","group_status":"STALLED","group_evidence":"all 3 partitions STALLED; worst p2: lag 410 for 5m"}`), &old); err != nil ||
		old.GroupEvidence != "all 3 partitions STALLED; worst p2: lag 410 for 5m" || old.GroupSummary != nil {
		t.Errorf("earlier version's observation: %+v (%v)", old, err)
	}
}
