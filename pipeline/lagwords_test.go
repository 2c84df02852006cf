package pipeline_test

import (
	"slices"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestMismatchWords: the verdict quotes the wrong-group finding as the words it is given word
// it (commands.MismatchEvidence in the app), as the symptom's and the cause's evidence; with
// none it quotes the finding's reason and the groups it names, and makes no sentence.
func TestMismatchWords(t *testing.T) {
	lag := &kafka.LagReport{Status: kafka.StatusOK, Mismatch: otherGroupConsumes}
	for _, c := range []struct {
		name  string
		words func(*kafka.LagReport) string
		want  string
	}{
		{"worded", func(r *kafka.LagReport) string {
			return "documented group " + r.Mismatch.Documented + " idle while " + r.Mismatch.Active[0].Group.Name + " consumes"
		}, "documented group sms-replies-prod idle while sms-replies-v2 consumes"},
		{"no words", nil, "empty sms-replies-prod sms-replies-v2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Lag: lag, Checkpoint: committing(), MismatchWords: c.words})
			var symptom, cause []string
			for _, s := range v.Symptoms {
				if s.ID == pipeline.SymptomDocumentedGroupIdle {
					symptom = s.Evidence
				}
			}
			for _, cs := range v.Causes {
				if cs.ID == pipeline.CauseGroupMismatch {
					cause = cs.Evidence
				}
			}
			if !slices.Equal(symptom, []string{c.want}) || !slices.Contains(cause, c.want) {
				t.Errorf("symptom evidence %q, cause evidence %q, want %q in both", symptom, cause, c.want)
			}
		})
	}
}
