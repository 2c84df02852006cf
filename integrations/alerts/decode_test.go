package alerts

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkAlert compares every field a decoder fills.
func checkAlert(t *testing.T, got, want Alert) {
	t.Helper()
	if got.Source != want.Source {
		t.Errorf("Source = %q, want %q", got.Source, want.Source)
	}
	if got.Fingerprint != want.Fingerprint {
		t.Errorf("Fingerprint = %q, want %q", got.Fingerprint, want.Fingerprint)
	}
	if got.Status != want.Status {
		t.Errorf("Status = %q, want %q", got.Status, want.Status)
	}
	if got.Title != want.Title {
		t.Errorf("Title = %q, want %q", got.Title, want.Title)
	}
	if got.Severity != want.Severity {
		t.Errorf("Severity = %v, want %v", got.Severity, want.Severity)
	}
	if !maps.Equal(got.Labels, want.Labels) || got.Labels == nil {
		t.Errorf("Labels = %v, want %v", got.Labels, want.Labels)
	}
	if !maps.Equal(got.Annotations, want.Annotations) || got.Annotations == nil {
		t.Errorf("Annotations = %v, want %v", got.Annotations, want.Annotations)
	}
	if !got.StartsAt.Equal(want.StartsAt) || got.StartsAt.IsZero() != want.StartsAt.IsZero() {
		t.Errorf("StartsAt = %v, want %v", got.StartsAt, want.StartsAt)
	}
	if !got.EndsAt.Equal(want.EndsAt) || got.EndsAt.IsZero() != want.EndsAt.IsZero() {
		t.Errorf("EndsAt = %v, want %v", got.EndsAt, want.EndsAt)
	}
	if got.URL != want.URL {
		t.Errorf("URL = %q, want %q", got.URL, want.URL)
	}
	if got.Links != want.Links {
		t.Errorf("Links = %+v, want %+v", got.Links, want.Links)
	}
	if got.DedupKey != want.DedupKey {
		t.Errorf("DedupKey = %q, want %q", got.DedupKey, want.DedupKey)
	}
	if got.Pipeline != "" || got.Channel != "" || got.Key != "" {
		t.Errorf("decoder set routing fields: %q %q %q", got.Pipeline, got.Channel, got.Key)
	}
}

func TestDecodeSamples(t *testing.T) {
	tests := []struct {
		file   string
		decode func([]byte) ([]Alert, error)
		want   []Alert
	}{
		{
			file:   "alertmanager-v0.35-webhook.json",
			decode: DecodeAlertmanager,
			want: []Alert{{
				Source:      "alertmanager",
				Fingerprint: "df7f2477231c2690",
				Status:      StatusFiring,
				Title:       "lag 1234 on payments",
				Severity:    SeverityWarning,
				Labels:      map[string]string{"alertname": "KafkaConsumerLag", "cluster": "prod", "group": "payments", "severity": "warning"},
				Annotations: map[string]string{"lag": "1234", "summary": "lag 1234 on payments"},
				StartsAt:    time.Date(2026, 11, 30, 13, 36, 36, 196059422, time.UTC),
			}},
		},
		{
			file:   "grafana-webhook.json",
			decode: DecodeGrafana,
			want: []Alert{{
				Source:      "grafana",
				Fingerprint: "4f6a0c2b9e1d7a35",
				Status:      StatusFiring,
				Title:       "No inbound SMS replies recorded for 15 minutes",
				Severity:    SeverityWarning,
				Labels:      map[string]string{"alertname": "client replied sms", "grafana_folder": "Messaging", "pipeline": "sms-replies", "severity": "Severity 3"},
				Annotations: map[string]string{
					"summary":     "No inbound SMS replies recorded for 15 minutes",
					"description": "client.replies.sms has new messages but the replies table received none",
				},
				StartsAt: time.Date(2026, 7, 21, 8, 12, 0, 0, time.UTC),
				URL:      "https://grafana.example.internal/d/replies?orgId=1&viewPanel=4",
				Links: Links{
					Generator: "https://grafana.example.internal/alerting/grafana/ab12cd34/view?orgId=1",
					Dashboard: "https://grafana.example.internal/d/replies?orgId=1",
					Panel:     "https://grafana.example.internal/d/replies?orgId=1&viewPanel=4",
					Silence:   "https://grafana.example.internal/alerting/silence/new?alertmanager=grafana&matcher=alertname%3Dclient+replied+sms",
				},
			}},
		},
		{
			// Grafana's payload is Alertmanager's shape, so the Alertmanager
			// decoder reads it too, with the generatorURL.
			file:   "grafana-webhook.json",
			decode: DecodeAlertmanager,
			want: []Alert{{
				Source:      "alertmanager",
				Fingerprint: "4f6a0c2b9e1d7a35",
				Status:      StatusFiring,
				Title:       "No inbound SMS replies recorded for 15 minutes",
				Severity:    SeverityWarning,
				Labels:      map[string]string{"alertname": "client replied sms", "grafana_folder": "Messaging", "pipeline": "sms-replies", "severity": "Severity 3"},
				Annotations: map[string]string{
					"summary":     "No inbound SMS replies recorded for 15 minutes",
					"description": "client.replies.sms has new messages but the replies table received none",
				},
				StartsAt: time.Date(2026, 7, 21, 8, 12, 0, 0, time.UTC),
				URL:      "https://grafana.example.internal/alerting/grafana/ab12cd34/view?orgId=1",
				Links:    Links{Generator: "https://grafana.example.internal/alerting/grafana/ab12cd34/view?orgId=1"},
			}},
		},
		{
			file:   "alertmanager-resolved.json",
			decode: DecodeAlertmanager,
			want: []Alert{
				{
					Source: "alertmanager",
					// No fingerprint given: derived from the labels alone.
					Fingerprint: labelsFingerprint(map[string]string{"alertname": "SparkCheckpointStale", "pipeline": "sms-replies", "priority": "P2"}, "", false),
					Status:      StatusResolved, // the payload's status
					Title:       "SparkCheckpointStale",
					Severity:    SeverityHigh,
					Labels:      map[string]string{"alertname": "SparkCheckpointStale", "pipeline": "sms-replies", "priority": "P2"},
					Annotations: map[string]string{"description": "no commit for 12m"},
					StartsAt:    time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
					EndsAt:      time.Date(2026, 11, 30, 9, 20, 0, 500000000, time.UTC),
					URL:         "http://prometheus:9090/graph?g0.expr=x",
					Links:       Links{Generator: "http://prometheus:9090/graph?g0.expr=x"},
				},
				{
					Source:      "alertmanager",
					Fingerprint: "0123456789abcdef",
					Status:      StatusFiring,
					Title:       "checkpoint stale on billing",
					Severity:    SeverityLow, // from the annotation
					Labels:      map[string]string{"alertname": "SparkCheckpointStale", "pipeline": "billing"},
					Annotations: map[string]string{"summary": "  checkpoint stale on billing  ", "severity": "sev-4"},
				},
			},
		},
		{
			file:   "generic-single.json",
			decode: DecodeGeneric,
			want: []Alert{{
				Source:      "generic",
				Fingerprint: "0a5224ba083311942215e7b36b85d10d888d78ed15dc612bd28641e4229d56ae", // sha256("dedup_key\x00" + dedup_key)
				Status:      StatusFiring,
				Title:       "Nightly export late",
				Severity:    SeverityHigh,
				Labels:      map[string]string{"pipeline": "sms-replies", "team": "data", "source": "nightly-export", "alertname": "Nightly export late"},
				Annotations: map[string]string{"description": "export has not finished by 06:00"},
				URL:         "https://runbooks.example.internal/nightly-export",
				Links:       Links{Generator: "https://runbooks.example.internal/nightly-export"},
				DedupKey:    "nightly-export/2026-11-30",
			}},
		},
		{
			file:   "generic-minimal.json",
			decode: DecodeGeneric,
			want: []Alert{{
				Source: "generic",
				// Pinned: fingerprints are stored, so the derivation must not drift.
				Fingerprint: "5e2f0fd3ef5ad290409a369fa7951fb0820081677c3d1853656e1aefa1287d47",
				Status:      StatusFiring,
				Title:       "Disk almost full on spark-driver-1",
				Labels:      map[string]string{"alertname": "Disk almost full on spark-driver-1"},
				Annotations: map[string]string{},
			}},
		},
		{
			file:   "generic-list.json",
			decode: DecodeGeneric,
			want: []Alert{
				{
					Source:      "generic",
					Fingerprint: labelsFingerprint(map[string]string{"alertname": "Checkpoint stale", "service": "sms-replies"}, "Checkpoint stale", true),
					Status:      StatusFiring,
					Title:       "Checkpoint stale",
					Severity:    SeverityHigh,
					Labels:      map[string]string{"alertname": "Checkpoint stale", "service": "sms-replies"},
					Annotations: map[string]string{},
				},
				{
					Source:      "generic",
					Fingerprint: labelsFingerprint(map[string]string{"alertname": "Checkpoint stale", "service": "sms-replies"}, "Checkpoint stale", true),
					Status:      StatusResolved,
					Title:       "Checkpoint stale",
					Severity:    SeverityLow,
					Labels:      map[string]string{"alertname": "Checkpoint stale", "service": "sms-replies"},
					Annotations: map[string]string{"note": "recovered"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.want[0].Source, func(t *testing.T) {
			got, err := tt.decode(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d alerts, want %d", len(got), len(tt.want))
			}
			for i := range got {
				t.Run(fmt.Sprint(i), func(t *testing.T) { checkAlert(t, got[i], tt.want[i]) })
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	am, gr, gen := DecodeAlertmanager, DecodeGrafana, DecodeGeneric
	big := strings.Repeat("x", MaxStringBytes+1)
	withLabels := func(n int) string {
		pairs := []string{`"alertname":"A"`}
		for i := 1; i < n; i++ {
			pairs = append(pairs, fmt.Sprintf(`"l%d":"v"`, i))
		}
		return "{" + strings.Join(pairs, ",") + "}"
	}
	manyAlerts := func(n int) string {
		return `{"alerts":[` + strings.TrimSuffix(strings.Repeat(`{"status":"firing","labels":{"alertname":"A"}},`, n), ",") + `]}`
	}
	tests := []struct {
		name   string
		decode func([]byte) ([]Alert, error)
		body   string
		reason string
	}{
		{"empty", am, "", "empty body"},
		{"blank", gen, " \n\t", "empty body"},
		{"syntax", am, `{"alerts": [}`, "invalid JSON at byte offset 12: invalid character '}' looking for beginning of value"},
		{"truncated", am, string(readTestdata(t, "malformed-truncated.json")), "invalid JSON: unexpected end of input at byte offset 91"},
		{"trailing data", gr, `{"alerts":[]} {}`, "invalid JSON at byte offset 14: unexpected data after the top-level value"},
		{"invalid UTF-8", gen, string(readTestdata(t, "malformed-invalid-utf8.json")), "invalid UTF-8 at byte offset 15"},
		{"invalid UTF-8 in a key", am, "{\"alerts\":[{\"labels\":{\"a\xc3\":\"b\"}}]}", "invalid UTF-8 at byte offset 24"},
		{"too deep", am, string(readTestdata(t, "malformed-deep.json")), "JSON nested deeper than 32 levels at byte offset 32"},
		{"too deep in an unknown field", gr, `{"alerts":[{"values":` + strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat("}", 40) + `}]}`, "JSON nested deeper than 32 levels at byte offset 166"},
		{"brackets in strings do not count", am, `{"x":"` + strings.Repeat("[", 100) + `","alerts":[]}`, "alerts: empty alerts list"},
		{"top level array", am, `[]`, "top level: expected an object, got an array"},
		{"missing alerts", am, `{"status":"firing"}`, "missing alerts"},
		{"null alerts", gr, `{"alerts":null}`, "missing alerts"},
		{"alerts not an array", am, `{"alerts":{}}`, "alerts: expected an array, got an object"},
		{"empty alerts", am, string(readTestdata(t, "malformed-empty-alerts.json")), "alerts: empty alerts list"},
		{"too many alerts", am, manyAlerts(MaxAlertsPerPayload + 1), "alerts: 1001 alerts, more than the limit of 1000"},
		{"alert not an object", am, `{"alerts":[{"labels":{"alertname":"A"},"status":"firing"},"x"]}`, "alerts[1]: expected an object, got a string"},
		{"wrong label type", am, string(readTestdata(t, "malformed-wrong-type.json")), "alerts[2].labels.severity: expected a string, got a number"},
		{"null label value", am, `{"alerts":[{"status":"firing","labels":{"alertname":null}}]}`, "alerts[0].labels.alertname: expected a string, got null"},
		{"odd label name", gr, `{"alerts":[{"status":"firing","labels":{"alertname":"A","my label":true}}]}`, `alerts[0].labels["my label"]: expected a string, got a boolean`},
		{"first bad label by name", am, `{"alerts":[{"status":"firing","labels":{"z":1,"b":[],"alertname":"A","c":{}}}]}`, "alerts[0].labels.b: expected a string, got an array"},
		{"labels not an object", am, `{"alerts":[{"status":"firing","labels":["alertname"]}]}`, "alerts[0].labels: expected an object, got an array"},
		{"annotations not an object", am, `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"annotations":"x"}]}`, "alerts[0].annotations: expected an object, got a string"},
		{"too many labels", am, `{"alerts":[{"status":"firing","labels":` + withLabels(MaxLabelsPerAlert+1) + `}]}`, "alerts[0].labels: 101 entries, more than the limit of 100"},
		{"too many annotations", am, `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"annotations":` + withLabels(MaxLabelsPerAlert+1) + `}]}`, "alerts[0].annotations: 101 entries, more than the limit of 100"},
		{"label value too long", am, `{"alerts":[{"status":"firing","labels":{"alertname":"` + big + `"}}]}`, "alerts[0].labels.alertname: 16385 bytes, more than the limit of 16384"},
		{"label name too long", am, `{"alerts":[{"status":"firing","labels":{"alertname":"A","` + big + `":"v"}}]}`, "alerts[0].labels: a name of 16385 bytes, more than the limit of 16384"},
		{"fingerprint too long", am, `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"fingerprint":"` + big + `"}]}`, "alerts[0].fingerprint: 16385 bytes, more than the limit of 16384"},
		{"missing alertname", am, string(readTestdata(t, "malformed-missing-alertname.json")), "alerts[0]: missing labels.alertname (and annotations.summary)"},
		{"blank alertname", gr, `{"alerts":[{"status":"firing","labels":{"alertname":"  "},"annotations":{"summary":""}}]}`, "alerts[0]: missing labels.alertname (and annotations.summary)"},
		{"unknown status", am, string(readTestdata(t, "malformed-unknown-status.json")), `alerts[0].status: unknown status "pending" (want firing or resolved)`},
		{"unknown payload status", gr, `{"status":"alerting","alerts":[{"status":"firing","labels":{"alertname":"A"}}]}`, `status: unknown status "alerting" (want firing or resolved)`},
		{"missing status", am, `{"alerts":[{"labels":{"alertname":"A"}}]}`, "alerts[0]: missing status"},
		{"status not a string", am, `{"alerts":[{"status":1,"labels":{"alertname":"A"}}]}`, "alerts[0].status: expected a string, got a number"},
		{"bad time", am, `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"startsAt":"yesterday"}]}`, `alerts[0].startsAt: invalid time "yesterday" (want RFC 3339)`},
		{"time not a string", am, `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"endsAt":0}]}`, "alerts[0].endsAt: expected a string, got a number"},
		{"grafana URL not a string", gr, `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"panelURL":{}}]}`, "alerts[0].panelURL: expected a string, got an object"},
		{"long value is not echoed", am, `{"alerts":[{"status":"` + big + `","labels":{"alertname":"A"}}]}`, "alerts[0].status: 16385 bytes, more than the limit of 16384"},
		{"long unknown status is cut", am, `{"alerts":[{"status":"` + strings.Repeat("é", 40) + `","labels":{"alertname":"A"}}]}`, `alerts[0].status: unknown status "` + strings.Repeat("é", 32) + `"… (want firing or resolved)`},

		{"generic missing title", gen, `{"severity":"high"}`, "missing title"},
		{"generic blank title", gen, `{"title":" "}`, "missing title"},
		{"generic title not a string", gen, `{"title":["a"]}`, "title: expected a string, got an array"},
		{"generic unknown status", gen, `{"title":"t","status":"ok"}`, `status: unknown status "ok" (want firing or resolved)`},
		{"generic severity wrong type", gen, `{"title":"t","severity":true}`, "severity: expected a string or a number, got a boolean"},
		{"generic dedup_key wrong type", gen, `{"title":"t","dedup_key":7}`, "dedup_key: expected a string, got a number"},
		{"generic source wrong type", gen, `{"title":"t","source":{}}`, "source: expected a string, got an object"},
		{"generic labels wrong type", gen, `{"title":"t","labels":{"severity":2}}`, "labels.severity: expected a string, got a number"},
		{"generic top level string", gen, `"t"`, "top level: expected an object or an array of objects, got a string"},
		{"generic empty list", gen, `[]`, "top level: empty alerts list"},
		{"generic list item not an object", gen, `[{"title":"t"},3]`, "[1]: expected an object, got a number"},
		{"generic list item without title", gen, `[{"title":"t"},{}]`, "[1]: missing title"},
		{"generic list item bad label", gen, `[{"title":"t","labels":{"a b":1}}]`, `[0].labels["a b"]: expected a string, got a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alerts, err := tt.decode([]byte(tt.body))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %d alerts, err %v (%T); want a *DecodeError", len(alerts), err, err)
			}
			if alerts != nil {
				t.Errorf("got alerts %v with an error", alerts)
			}
			if de.Reason != tt.reason {
				t.Errorf("reason\n got %s\nwant %s", de.Reason, tt.reason)
			}
			if err.Error() != "invalid alert payload: "+tt.reason {
				t.Errorf("Error() = %q", err.Error())
			}
			if !utf8.ValidString(de.Reason) || len(de.Reason) > 300 {
				t.Errorf("reason is not short, valid UTF-8: %q", de.Reason)
			}
		})
	}
}

func TestDecodeLimitsAreInclusive(t *testing.T) {
	var alerts []string
	for i := range MaxAlertsPerPayload {
		labels := []string{`"alertname":"A` + strconv.Itoa(i) + `"`}
		for j := 1; j < MaxLabelsPerAlert; j++ {
			labels = append(labels, fmt.Sprintf(`"l%d":"v"`, j))
		}
		alerts = append(alerts, `{"status":"resolved","labels":{`+strings.Join(labels, ",")+`}}`)
	}
	body := `{"alerts":[` + strings.Join(alerts, ",") + `]}`
	got, err := DecodeAlertmanager([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxAlertsPerPayload || len(got[999].Labels) != MaxLabelsPerAlert || got[999].Title != "A999" {
		t.Fatalf("got %d alerts", len(got))
	}

	deep := `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"x":` + strings.Repeat("[", MaxNestingDepth-3) + strings.Repeat("]", MaxNestingDepth-3) + `}]}`
	if _, err := DecodeGrafana([]byte(deep)); err != nil {
		t.Fatalf("depth %d: %v", MaxNestingDepth, err)
	}
	long := `{"title":"` + strings.Repeat("x", MaxStringBytes) + `","labels":{"` + strings.Repeat("n", MaxStringBytes) + `":"v"}}`
	if _, err := DecodeGeneric([]byte(long)); err != nil {
		t.Fatalf("strings of %d bytes: %v", MaxStringBytes, err)
	}
}

func TestDecodeGenericFields(t *testing.T) {
	tests := []struct {
		name string
		body string
		want func(t *testing.T, a Alert)
	}{
		{"numeric severity", `{"title":"t","severity":1}`, func(t *testing.T, a Alert) {
			if a.Severity != SeverityCritical {
				t.Errorf("Severity = %v", a.Severity)
			}
		}},
		{"float severity", `{"title":"t","severity":4.0}`, func(t *testing.T, a Alert) {
			if a.Severity != SeverityLow {
				t.Errorf("Severity = %v", a.Severity)
			}
		}},
		{"out of range number is unknown", `{"title":"t","severity":9}`, func(t *testing.T, a Alert) {
			if a.Severity != SeverityUnknown || a.Severity.String() != "unknown" {
				t.Errorf("Severity = %v", a.Severity)
			}
		}},
		{"huge number is unknown", `{"title":"t","severity":1e999}`, func(t *testing.T, a Alert) {
			if a.Severity != SeverityUnknown {
				t.Errorf("Severity = %v", a.Severity)
			}
		}},
		{"unknown severity falls back to labels", `{"title":"t","severity":"whatever","labels":{"priority":"P1"}}`, func(t *testing.T, a Alert) {
			if a.Severity != SeverityCritical {
				t.Errorf("Severity = %v", a.Severity)
			}
		}},
		{"explicit severity beats labels", `{"title":"t","severity":"info","labels":{"severity":"critical"}}`, func(t *testing.T, a Alert) {
			if a.Severity != SeverityInfo {
				t.Errorf("Severity = %v", a.Severity)
			}
		}},
		{"own labels win over source and title", `{"title":"t","source":"cron","labels":{"source":"s","alertname":"n"}}`, func(t *testing.T, a Alert) {
			if a.Labels["source"] != "s" || a.Labels["alertname"] != "n" {
				t.Errorf("Labels = %v", a.Labels)
			}
		}},
		{"null fields read as absent", `{"title":"t","status":null,"labels":null,"annotations":null,"severity":null,"dedup_key":null}`, func(t *testing.T, a Alert) {
			if a.Status != StatusFiring || a.Annotations == nil || len(a.Labels) != 1 || a.DedupKey != "" {
				t.Errorf("got %+v", a)
			}
		}},
		{"title and dedup_key trimmed", `{"title":"  t \n","dedup_key":" k "}`, func(t *testing.T, a Alert) {
			if a.Title != "t" || a.DedupKey != "k" {
				t.Errorf("Title %q DedupKey %q", a.Title, a.DedupKey)
			}
		}},
		{"escapes decoded", `{"title":"a\"b\u00e9\\ \ud800\n","labels":{"k":"v\/w"}}`, func(t *testing.T, a Alert) {
			if a.Title != "a\"bé\\ \ufffd" || a.Labels["k"] != "v/w" {
				t.Errorf("Title %q Labels %q", a.Title, a.Labels)
			}
		}},
		{"surrounding whitespace", " \r\n\t{\"title\":\"t\"}\n ", func(t *testing.T, a Alert) {
			if a.Title != "t" {
				t.Errorf("Title %q", a.Title)
			}
		}},
		{"unknown fields ignored", `{"title":"t","extra":{"a":[1,2,3]},"Title":5}`, func(t *testing.T, a Alert) {
			if a.Title != "t" {
				t.Errorf("Title %q", a.Title)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeGeneric([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d alerts", len(got))
			}
			tt.want(t, got[0])
		})
	}
}

func TestGenericFingerprint(t *testing.T) {
	fp := func(body string) string {
		t.Helper()
		got, err := DecodeGeneric([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return got[0].Fingerprint
	}
	base := fp(`{"title":"t","labels":{"a":"1","b":"2"}}`)
	if again := fp(`{"labels":{"b":"2","a":"1"},"title":"t","severity":"high","annotations":{"x":"y"}}`); again != base {
		t.Errorf("fingerprint depends on label order, severity or annotations: %s != %s", again, base)
	}
	for _, other := range []string{
		`{"title":"u","labels":{"a":"1","b":"2"}}`,
		`{"title":"t","labels":{"a":"1","b":"3"}}`,
		`{"title":"t","labels":{"a":"1"}}`,
		`{"title":"t","labels":{"a":"1b","":"2"}}`,
		`{"title":"t","labels":{"a":"1","b":"2"},"source":"s"}`,
		`{"title":"t","labels":{"a":"1","b":"2"},"dedup_key":"t"}`,
	} {
		if fp(other) == base {
			t.Errorf("%s has the same fingerprint as the base", other)
		}
	}
	if a, b := fp(`{"title":"t","dedup_key":"k","labels":{"a":"1"}}`), fp(`{"title":"u","dedup_key":"k"}`); a != b {
		t.Errorf("dedup_key fingerprints differ: %s != %s", a, b)
	}
}

func BenchmarkDecodeAlertmanager(b *testing.B) {
	body := readTestdata(b, "alertmanager-v0.35-webhook.json")
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeAlertmanager(body); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeMemoryBounded guards against a body that is cheap to send and
// expensive to decode: fields the decoders do not read must not be expanded
// into generic values (which cost about 50 times the body).
func TestDecodeMemoryBounded(t *testing.T) {
	const alert = `{"status":"firing","labels":{"alertname":"A"}}`
	bodies := map[string]string{
		"numbers":        `{"alerts":[` + alert + `],"x":[` + strings.Repeat(`1,`, 500_000) + `1]}`,
		"objects":        `{"alerts":[` + alert + `],"x":[` + strings.Repeat(`{},`, 330_000) + `{}]}`,
		"in an alert":    `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"values":[` + strings.Repeat(`[],`, 330_000) + `[]]}]}`,
		"generic extras": `{"title":"t","x":[` + strings.Repeat(`"",`, 330_000) + `""]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			decode := DecodeGrafana
			if strings.HasPrefix(body, `{"title"`) {
				decode = DecodeGeneric
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			if _, err := decode([]byte(body)); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			if used := after.TotalAlloc - before.TotalAlloc; used > 10*uint64(len(body)) {
				t.Errorf("decoding %d bytes allocated %d bytes", len(body), used)
			} else {
				t.Logf("decoding %d bytes allocated %d bytes", len(body), used)
			}
		})
	}
}

// TestLinksOfEverySender: each sender's link fields land in Links, the runbook_url annotation
// as the runbook; both Alertmanager-shape decoders agree.
func TestLinksOfEverySender(t *testing.T) {
	am := `{"alerts":[{"status":"firing","labels":{"alertname":"A"},"annotations":{"runbook_url":"https://wiki/r"},` +
		`"generatorURL":"http://prom/graph","panelURL":"http://g/p","silenceURL":"http://g/s","dashboardURL":"http://g/d"}]}`
	for _, c := range []struct {
		source string
		decode func([]byte) ([]Alert, error)
		want   Links
		url    string
	}{
		// Alertmanager sends none of Grafana's fields: they are unknown fields there.
		{SourceAlertmanager, DecodeAlertmanager, Links{Generator: "http://prom/graph", Runbook: "https://wiki/r"}, "http://prom/graph"},
		{SourceGrafana, DecodeGrafana, Links{Generator: "http://prom/graph", Dashboard: "http://g/d", Panel: "http://g/p",
			Silence: "http://g/s", Runbook: "https://wiki/r"}, "http://g/p"},
	} {
		got, err := c.decode([]byte(am))
		if err != nil {
			t.Fatal(err)
		}
		careful, err := carefulAlertmanagerShape([]byte(am), c.source)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Links != c.want || careful[0].Links != c.want || got[0].URL != c.url {
			t.Errorf("%s: links %+v (careful %+v), url %q; want %+v, %q", c.source, got[0].Links, careful[0].Links, got[0].URL, c.want, c.url)
		}
	}
	got, err := DecodeGeneric([]byte(`{"title":"t","url":"https://x/y","annotations":{"runbook_url":"https://wiki/t"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Links{Generator: "https://x/y", Runbook: "https://wiki/t"}); got[0].Links != want {
		t.Errorf("generic links %+v, want %+v", got[0].Links, want)
	}
}

func TestSafeURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://grafana.example/d/db?orgId=1&viewPanel=4": "https://grafana.example/d/db?orgId=1&viewPanel=4",
		" http://prometheus:9090/graph?g0.expr=up ":        "http://prometheus:9090/graph?g0.expr=up",
		"HTTPS://wiki.example/run%20book":                  "https://wiki.example/run%20book",
		"http://[::1]:3000/x":                              "http://[::1]:3000/x",
		"javascript:alert(1)":                              "",
		"https://user:pw@grafana.example/":                 "",
		"ftp://files.example/x":                            "",
		"https://grafana.example/<script>":                 "",
		"https://<#C0PIPE>/":                               "",
		"http://%3C/":                                      "",
		"https://a b/":                                     "",
		"//grafana.example/x":                              "",
		"https://grafana.example/x\u2028y":                 "",
		"https://host:port/":                               "",
	} {
		if got := SafeURL(in); got != want {
			t.Errorf("SafeURL(%q) = %q, want %q", in, got, want)
		}
	}
}
