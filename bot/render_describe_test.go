package bot

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

// TestRootDescribesItsPipeline: the root's Pipeline field carries pipelines[].description.
func TestRootDescribesItsPipeline(t *testing.T) {
	inc := &state.Incident{ID: "INC-7", Title: "client replied sms", Severity: 2, Status: state.StatusOpen, Pipeline: "sms-replies",
		Count: 1, FirstSeen: time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC), LastSeen: time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)}
	d := &deliverer{describe: map[string]string{"sms-replies": "inbound SMS replies, Kafka to Spark"}}
	b, _ := json.Marshal(d.root(inc).Blocks)
	if !strings.Contains(string(b), `*Pipeline*\nsms-replies (inbound SMS replies, Kafka to Spark)`) {
		t.Errorf("the root does not describe its pipeline: %s", b)
	}
	inc.Pipeline = "orders"
	b, _ = json.Marshal(d.root(inc).Blocks)
	if !strings.Contains(string(b), `*Pipeline*\norders"`) {
		t.Errorf("a pipeline without a description: %s", b)
	}
}
