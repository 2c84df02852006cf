package alerts

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"testing"
)

// BenchmarkDecode compares the two Alertmanager-shape decoders on real payloads: the one-pass
// fast path (fast.go) and the careful decoder (json.go), which re-reads the body once per
// nesting level and alone words errors.
func BenchmarkDecode(b *testing.B) {
	payloads := map[string][]byte{}
	for _, name := range []string{"alertmanager-v0.35-webhook.json", "grafana-webhook.json", "alertmanager-resolved.json"} {
		body, err := os.ReadFile("testdata/" + name)
		if err != nil {
			b.Fatal(err)
		}
		payloads[name] = body
	}
	// A storm's payload: 100 alerts in one group.
	var group map[string]any
	if err := json.Unmarshal(payloads["alertmanager-v0.35-webhook.json"], &group); err != nil {
		b.Fatal(err)
	}
	first := group["alerts"].([]any)[0].(map[string]any)
	var list []any
	for i := range 100 {
		a := maps.Clone(first)
		labels := maps.Clone(a["labels"].(map[string]any))
		labels["instance"] = fmt.Sprintf("host-%d:9100", i)
		a["labels"], a["fingerprint"] = labels, fmt.Sprintf("%016x", i)
		list = append(list, a)
	}
	group["alerts"] = list
	many, err := json.Marshal(group)
	if err != nil {
		b.Fatal(err)
	}
	payloads["100 alerts"] = many
	for name, body := range payloads {
		if _, ok := fastAlertmanagerShape(body, SourceAlertmanager); !ok {
			b.Fatalf("the fast path does not take %s", name)
		}
		for _, d := range []struct {
			name   string
			decode func([]byte, string) ([]Alert, error)
		}{
			{"fast", func(body []byte, src string) ([]Alert, error) {
				out, _ := fastAlertmanagerShape(body, src)
				return out, nil
			}},
			{"careful", carefulAlertmanagerShape},
		} {
			b.Run(name+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := d.decode(body, SourceAlertmanager); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
