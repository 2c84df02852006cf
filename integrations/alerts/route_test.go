package alerts

import (
	"regexp"
	"testing"
)

// sketchRouter is the router the shared config sketch describes.
func sketchRouter() *Router {
	return NewRouter(
		[]Route{
			{Match: map[string]string{"service": "sms-replies"}, Pipeline: "sms-replies"},
			{MatchRE: map[string]*regexp.Regexp{"alertname": regexp.MustCompile("^(?:client replied sms|ReplyPipeline.*)$")}, Pipeline: "sms-replies"},
			{Match: map[string]string{"team": "billing", "env": ""}, MatchRE: map[string]*regexp.Regexp{"cluster": regexp.MustCompile("^(?:prod|staging)$")}, Pipeline: "billing"},
			{Match: map[string]string{"team": "billing"}, Pipeline: "billing-other"},
			{Match: map[string]string{"team": "ghost"}, Pipeline: "not-configured"},
		},
		[]string{"alertname", "pipeline"},
		map[string]string{"sms-replies": "C0PIPE", "billing": "C0BILL", "billing-other": "", "payments": "C0PAY"},
		"C0DEFAULT",
	)
}

func TestRoute(t *testing.T) {
	tests := []struct {
		name                   string
		labels                 map[string]string
		dedupKey               string
		pipeline, channel, key string
	}{
		{"match", map[string]string{"alertname": "Lag", "service": "sms-replies"},
			"", "sms-replies", "C0PIPE", "alertname=Lag|pipeline=sms-replies"},
		{"match_re", map[string]string{"alertname": "client replied sms"},
			"", "sms-replies", "C0PIPE", "alertname=client replied sms|pipeline=sms-replies"},
		{"match_re prefix", map[string]string{"alertname": "ReplyPipelineDown"},
			"", "sms-replies", "C0PIPE", "alertname=ReplyPipelineDown|pipeline=sms-replies"},
		{"match_re is anchored", map[string]string{"alertname": "not client replied sms"},
			"", "", "C0DEFAULT", "alertname=not client replied sms|pipeline="},
		{"all of match and match_re must hold", map[string]string{"alertname": "A", "team": "billing", "cluster": "dev"},
			"", "billing-other", "C0DEFAULT", "alertname=A|pipeline=billing-other"},
		{"match and match_re", map[string]string{"alertname": "A", "team": "billing", "cluster": "prod"},
			"", "billing", "C0BILL", "alertname=A|pipeline=billing"},
		{"empty match value needs the label absent or empty", map[string]string{"alertname": "A", "team": "billing", "cluster": "prod", "env": "qa"},
			"", "billing-other", "C0DEFAULT", "alertname=A|pipeline=billing-other"},
		{"first route wins", map[string]string{"alertname": "ReplyPipelineDown", "team": "billing", "cluster": "prod"},
			"", "sms-replies", "C0PIPE", "alertname=ReplyPipelineDown|pipeline=sms-replies"},
		{"own known pipeline label wins over routes", map[string]string{"alertname": "Lag", "service": "sms-replies", "pipeline": "payments"},
			"", "payments", "C0PAY", "alertname=Lag|pipeline=payments"},
		{"own unknown pipeline label falls through to routes", map[string]string{"alertname": "Lag", "service": "sms-replies", "pipeline": "typo"},
			"", "sms-replies", "C0PIPE", "alertname=Lag|pipeline=sms-replies"},
		{"own unknown pipeline label, no route: default channel, label kept in key", map[string]string{"alertname": "Lag", "pipeline": "typo"},
			"", "", "C0DEFAULT", "alertname=Lag|pipeline=typo"},
		{"route to an unconfigured pipeline uses the default channel", map[string]string{"alertname": "A", "team": "ghost"},
			"", "not-configured", "C0DEFAULT", "alertname=A|pipeline=not-configured"},
		{"no match", map[string]string{"alertname": "KafkaConsumerLag", "cluster": "prod"},
			"", "", "C0DEFAULT", "alertname=KafkaConsumerLag|pipeline="},
		{"no labels", nil, "", "", "C0DEFAULT", "alertname=|pipeline="},
		{"explicit dedup key wins", map[string]string{"alertname": "A", "service": "sms-replies"},
			"nightly-export/2026-11-30", "sms-replies", "C0PIPE", "nightly-export/2026-11-30"},
		{"separators escaped", map[string]string{"alertname": `a|pipeline=b\`, "pipeline": "x"},
			"", "", "C0DEFAULT", `alertname=a\|pipeline\=b\\|pipeline=x`},
	}
	r := sketchRouter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Alert{Labels: tt.labels, DedupKey: tt.dedupKey, Fingerprint: "fp"}
			r.Route(&a)
			if a.Pipeline != tt.pipeline || a.Channel != tt.channel || a.Key != tt.key {
				t.Errorf("got pipeline %q channel %q key %q\nwant pipeline %q channel %q key %q",
					a.Pipeline, a.Channel, a.Key, tt.pipeline, tt.channel, tt.key)
			}
		})
	}
}

func TestRouteSamples(t *testing.T) {
	r := sketchRouter()
	tests := []struct {
		file                   string
		decode                 func([]byte) ([]Alert, error)
		pipeline, channel, key string
	}{
		{"grafana-webhook.json", DecodeGrafana, "sms-replies", "C0PIPE", "alertname=client replied sms|pipeline=sms-replies"},
		{"alertmanager-v0.35-webhook.json", DecodeAlertmanager, "", "C0DEFAULT", "alertname=KafkaConsumerLag|pipeline="},
		{"generic-single.json", DecodeGeneric, "sms-replies", "C0PIPE", "nightly-export/2026-11-30"},
		{"generic-minimal.json", DecodeGeneric, "", "C0DEFAULT", "alertname=Disk almost full on spark-driver-1|pipeline="},
		{"generic-list.json", DecodeGeneric, "sms-replies", "C0PIPE", "alertname=Checkpoint stale|pipeline=sms-replies"},
	}
	for _, tt := range tests {
		alerts, err := tt.decode(readTestdata(t, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		for i := range alerts {
			r.Route(&alerts[i])
			if a := alerts[i]; a.Pipeline != tt.pipeline || a.Channel != tt.channel || a.Key != tt.key {
				t.Errorf("%s[%d]: got %q %q %q, want %q %q %q", tt.file, i, a.Pipeline, a.Channel, a.Key, tt.pipeline, tt.channel, tt.key)
			}
		}
	}
}

func TestRouteKeys(t *testing.T) {
	tests := []struct {
		name    string
		groupBy []string
		alert   Alert
		key     string
	}{
		{"group_by order kept", []string{"pipeline", "cluster", "alertname"},
			Alert{Labels: map[string]string{"alertname": "A", "cluster": "prod", "service": "sms-replies"}},
			"pipeline=sms-replies|cluster=prod|alertname=A"},
		{"pipeline means the routed pipeline", []string{"pipeline"},
			Alert{Labels: map[string]string{"pipeline": "typo", "service": "sms-replies"}},
			"pipeline=sms-replies"},
		{"missing label is empty", []string{"alertname", "cluster"},
			Alert{Labels: map[string]string{"alertname": "A"}},
			"alertname=A|cluster="},
		{"empty group_by keys by fingerprint", nil,
			Alert{Fingerprint: "df7f2477231c2690", Labels: map[string]string{"alertname": "A"}},
			"fingerprint=df7f2477231c2690"},
		{"odd label names escaped", []string{"a=b", `c|d\`},
			Alert{Labels: map[string]string{"a=b": "1", `c|d\`: "2"}},
			`a\=b=1|c\|d\\=2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRouter([]Route{{Match: map[string]string{"service": "sms-replies"}, Pipeline: "sms-replies"}},
				tt.groupBy, map[string]string{"sms-replies": "C0PIPE"}, "C0DEFAULT")
			a := tt.alert
			r.Route(&a)
			if a.Key != tt.key {
				t.Errorf("Key = %q, want %q", a.Key, tt.key)
			}
		})
	}
}

// TestRouteKeysUnambiguous checks that label values which differ only in
// where a separator falls do not share a key.
func TestRouteKeysUnambiguous(t *testing.T) {
	r := NewRouter(nil, []string{"a", "b"}, nil, "")
	pairs := [][2]string{
		{"x|b=y", ""}, {"x", "y"}, {"x|b", "y"}, {`x\`, "y"}, {`x\|b=y`, ""}, {"x=", "y"}, {"", "x|b=y"}, {`x\\`, `y`},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		a := Alert{Labels: map[string]string{"a": p[0], "b": p[1]}}
		r.Route(&a)
		if prev, dup := seen[a.Key]; dup {
			t.Errorf("labels %q and %q share key %q", prev, p, a.Key)
		}
		seen[a.Key] = p
	}
}

func TestRouterEdgeCases(t *testing.T) {
	var zero Router
	a := Alert{Fingerprint: "f", Labels: map[string]string{"pipeline": "p"}}
	zero.Route(&a)
	if a.Pipeline != "" || a.Channel != "" || a.Key != "fingerprint=f" {
		t.Errorf("zero Router: %q %q %q", a.Pipeline, a.Channel, a.Key)
	}
	zero.Route(nil) // must not panic

	routes := []Route{
		{MatchRE: map[string]*regexp.Regexp{"alertname": nil}, Pipeline: "nil-re"},
		{Pipeline: "catch-all"},
	}
	channels := map[string]string{"catch-all": "C1"}
	r := NewRouter(routes, []string{"alertname"}, channels, "C0")
	// The router copies its inputs.
	routes[1].Pipeline = "changed"
	channels["catch-all"] = "C2"
	b := Alert{Labels: map[string]string{"alertname": "A"}}
	r.Route(&b)
	if b.Pipeline != "catch-all" || b.Channel != "C1" || b.Key != "alertname=A" {
		t.Errorf("got %q %q %q", b.Pipeline, b.Channel, b.Key)
	}
}
