package pipeline_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/pipeline"
)

// like says whether got matches the pattern want: every non-zero field of want equals got's,
// a plain string field is contained in got's, a pointer's target is matched the same way.
func like(got, want reflect.Value) bool {
	switch want.Kind() {
	case reflect.Pointer:
		if want.IsNil() {
			return true
		}
		return !got.IsNil() && like(got.Elem(), want.Elem())
	case reflect.Struct:
		if t, ok := want.Interface().(time.Time); ok {
			return t.IsZero() || t.Equal(got.Interface().(time.Time))
		}
		for i := range want.NumField() {
			if !want.Type().Field(i).IsExported() || want.Field(i).IsZero() {
				continue
			}
			if !like(got.Field(i), want.Field(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		if want.Type() == reflect.TypeFor[string]() {
			return strings.Contains(got.String(), want.String())
		}
	}
	return want.IsZero() || reflect.DeepEqual(got.Interface(), want.Interface())
}

// hasFact says whether facts hold one like want.
func hasFact(facts []pipeline.Fact, want pipeline.Fact) bool {
	for _, f := range facts {
		if like(reflect.ValueOf(f), reflect.ValueOf(want)) {
			return true
		}
	}
	return false
}

// contra is a contradiction as the pattern of its Fact.
func contra(c pipeline.Contradiction) pipeline.Fact {
	return pipeline.Fact{Kind: pipeline.FactContradiction, Contradiction: &c}
}

// TestFactEqual: facts are equal field by field, times by their instant; a verdict's evidence
// holds each finding once.
func TestFactEqual(t *testing.T) {
	a := pipeline.Fact{Kind: pipeline.FactProbe, At: at, Text: "permission denied", Items: []string{"x"}}
	b := a
	b.At = at.In(time.FixedZone("X", 3600))
	b.Items = []string{"x"}
	if !a.Equal(b) {
		t.Errorf("%+v and %+v differ", a, b)
	}
	for _, c := range []pipeline.Fact{{Kind: pipeline.FactLog, At: at, Text: "permission denied"}, {Kind: pipeline.FactProbe, At: at.Add(time.Second), Text: "permission denied"},
		{Kind: pipeline.FactProbe, At: at, Text: "permission denied", Items: []string{"y"}}} {
		if a.Equal(c) {
			t.Errorf("%+v equals %+v", a, c)
		}
	}
	in := pipeline.Inputs{Pipeline: "sms-replies", Now: at, Lag: healthyLag(), Checkpoint: stopped(), Logs: permissionLine(at.Add(-10 * time.Minute))}
	in.Logs.Matches = append(in.Logs.Matches, in.Logs.Matches[0])
	v := pipeline.Judge(in)
	for _, s := range v.Symptoms {
		if s.ID == pipeline.SymptomLogErrors && len(s.Evidence) != 1 {
			t.Errorf("the same log match twice is %d facts: %+v", len(s.Evidence), s.Evidence)
		}
	}
}

// TestVerdictJSON: a verdict encodes as JSON and decodes to the same verdict, so that it can be
// stored and rendered later.
func TestVerdictJSON(t *testing.T) {
	for _, in := range verdictInputs() {
		in.Pipeline, in.Now = "sms-replies", at
		v := pipeline.Judge(in)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back pipeline.Verdict
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		b2, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(b2) {
			t.Errorf("the verdict changed through JSON:\n%s\n%s", b, b2)
		}
	}
}
