package alerts

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzFastMatchesCareful holds the one-pass decoder to the careful one: whatever
// the fast path accepts, the careful decoder accepts with the same alerts.
func FuzzFastMatchesCareful(f *testing.F) {
	seedFromTestdata(f)
	const alert = `{"status":"firing","labels":{"alertname":"A"}}`
	for _, s := range []string{
		`{"alerts":[` + alert + `]}`,
		` {"alerts" : [ ` + alert + ` , {"labels":{"alertname":"B"},"status":"resolved"} ] } ` + "\n",
		`{"alerts":[{"labels":{"alertname":"A"}}],"status":"resolved"}`,
		`{"alerts":[{"labels":{"alertname":"A"}}]}`,
		`{"alerts":[` + alert + `],"alerts":[]}`,
		`{"alerts":[` + alert + `],"alerts":null}`,
		`{"alerts":null,"alerts":[` + alert + `]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"labels":{"alertname":"B"}}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":7},"labels":{"alertname":"B"}}]}`,
		`{"alerts":[{"st\u0061tus":"firing","labels":{"alert\u006eame":"\u00e9\ud83d\ude00"}}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"\ud800"}}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"a\"b\\c\/d\b\f\n\r\t"}}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"a\x"}}]}`,
		`{"alerts":[{"status":"FIRING ","labels":{"alertname":" A "},"annotations":{"summary":"  "}}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":null}}]}`,
		`{"alerts":[{"status":"firing","labels":null,"annotations":{"summary":"S"}}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A","severity":"critical"},"startsAt":"2026-11-30T10:00:00.123+01:00","endsAt":"0001-01-01T00:00:00Z"}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"startsAt":"yesterday"}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"generatorURL":"g","panelURL":"p","dashboardURL":"d"}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"panelURL":1}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"fingerprint":"abc"}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"x":[1,-0.5e+3,2E-7,true,false,null,{"y":[[]]}]}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"x":01}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"x":1.}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"x":-}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},"x":tru}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"}},]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"},}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"}}]}x`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"}}]}` + "\x00",
		`{"alerts":[{"status":"firing","labels":{"alertname":"A` + "\x01" + `"}}]}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"}}],"x":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}`,
		`{"alerts":[{"status":"firing","labels":{"alertname":"A"}}],"x":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`,
		`{"status":1,"alerts":[` + alert + `]}`,
		`{"status":"pending","alerts":[` + alert + `]}`,
		`[` + alert + `]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, source := range []string{SourceAlertmanager, SourceGrafana} {
			fast, ok := fastAlertmanagerShape(body, source)
			careful, err := carefulAlertmanagerShape(body, source)
			if !ok {
				continue
			}
			if err != nil {
				t.Fatalf("%s: the fast path accepted what the careful decoder rejects (%v)", source, err)
			}
			if !reflect.DeepEqual(fast, careful) {
				t.Fatalf("%s: fast path\n%+v\ncareful decoder\n%+v", source, fast, careful)
			}
		}
	})
}

// TestFastPathTakesRealPayloads: the payloads senders send do not fall back
// to the careful decoder, or the fast path would be dead code.
func TestFastPathTakesRealPayloads(t *testing.T) {
	for _, c := range []struct{ file, source string }{
		{"alertmanager-v0.35-webhook.json", SourceAlertmanager},
		{"alertmanager-resolved.json", SourceAlertmanager},
		{"grafana-webhook.json", SourceGrafana},
	} {
		body := readTestdata(t, c.file)
		fast, ok := fastAlertmanagerShape(body, c.source)
		if !ok {
			t.Errorf("%s: the fast path gave up", c.file)
			continue
		}
		careful, err := carefulAlertmanagerShape(body, c.source)
		if err != nil || !reflect.DeepEqual(fast, careful) {
			t.Errorf("%s: fast %+v, careful %+v (%v)", c.file, fast, careful, err)
		}
	}
	for _, name := range []string{"malformed-deep.json", "malformed-empty-alerts.json", "malformed-invalid-utf8.json",
		"malformed-missing-alertname.json", "malformed-truncated.json", "malformed-unknown-status.json", "malformed-wrong-type.json"} {
		if _, ok := fastAlertmanagerShape(readTestdata(t, name), SourceAlertmanager); ok {
			t.Errorf("%s: the fast path accepted it", name)
		}
	}
}
