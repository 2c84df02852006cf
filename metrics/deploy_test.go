package metrics

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"sort"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"
)

// exported lists every metric name streamwatch serves at /metrics (a histogram's _bucket,
// _sum and _count included), read from the collectors' own descriptions.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	m := New()
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	names := map[string]bool{}
	add := func(c prometheus.Collector, histogram bool) {
		ch := make(chan *prometheus.Desc, 64)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			n := fq.FindStringSubmatch(d.String())
			if n == nil {
				t.Fatalf("no name in %s", d)
			}
			names[n[1]] = true
			if histogram {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					names[n[1]+s] = true
				}
			}
		}
	}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanInterface() {
			continue
		}
		if c, ok := f.Interface().(prometheus.Collector); ok {
			_, h := c.(prometheus.Histogram)
			_, hv := c.(*prometheus.HistogramVec)
			add(c, h || hv)
		}
	}
	add(progressCollector{}, false)
	return names
}

var metricName = regexp.MustCompile(`\bstreamwatch_[a-z0-9_]+`)

// TestDeployReferencesExportedMetrics: the Grafana dashboard and the Prometheus rules in
// deploy/ parse, and every streamwatch_ metric they query is one streamwatch serves (a renamed
// metric would leave an empty panel or a rule that never fires).
func TestDeployReferencesExportedMetrics(t *testing.T) {
	names := exported(t)
	for _, want := range []string{"streamwatch_pipeline_records_waiting", "streamwatch_pipeline_oldest_waiting_seconds",
		"streamwatch_pipeline_checkpoint_commit_age_seconds", "streamwatch_pipeline_lag_status",
		"streamwatch_pipeline_probe_status", "streamwatch_outbox_delivery_seconds_bucket"} {
		if !names[want] {
			t.Fatalf("the exported names lack %s: %v", want, names)
		}
	}
	rules, err := os.ReadFile("../deploy/prometheus/streamwatch-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Expr string
				Labels      map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(rules, &rf); err != nil {
		t.Fatalf("rules: %v", err)
	}
	var exprs []string
	absent := false
	promql := parser.NewParser(parser.Options{}) // Prometheus's defaults: no experimental functions
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" {
				t.Errorf("rule %+v lacks a name, an expression or a severity", r)
			}
			// Prometheus's own PromQL parser, as the rule loader runs it.
			expr, err := promql.ParseExpr(r.Expr)
			if err != nil {
				t.Errorf("rule %s: %v", r.Alert, err)
			} else if v := expr.Type(); v != parser.ValueTypeVector {
				t.Errorf("rule %s gives a %s; an alerting rule needs an instant vector", r.Alert, v)
			}
			if call, ok := expr.(*parser.Call); ok && call.Func.Name == "absent" {
				absent = true
			}
			exprs = append(exprs, r.Expr)
		}
	}
	if !absent {
		t.Error("no rule fires when no replica serves metrics (absent())")
	}
	dash, err := os.ReadFile("../deploy/grafana/streamwatch-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Definition string }
		}
	}
	if err := json.Unmarshal(dash, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	used := map[string]bool{}
	for _, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			used[n] = true
		}
	}
	if len(used) < 8 {
		t.Fatalf("deploy/ queries only %d metrics: %v", len(used), used)
	}
	var unknown []string
	for n := range used {
		if !names[n] {
			unknown = append(unknown, n)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Fatalf("deploy/ queries metrics streamwatch does not export: %v", unknown)
	}
}
