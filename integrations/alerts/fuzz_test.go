package alerts

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// seedFromTestdata adds every testdata file, so each target starts from the
// real samples, the other senders' payloads and the malformed ones.
func seedFromTestdata(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func fuzzDecoder(f *testing.F, decode func([]byte) ([]Alert, error)) {
	seedFromTestdata(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		alerts, err := decode(body)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is a %T, not a *DecodeError", err, err)
			}
			if alerts != nil {
				t.Fatalf("alerts %v returned with error %v", alerts, err)
			}
			if de.Reason == "" || !utf8.ValidString(de.Reason) {
				t.Fatalf("bad reason %q", de.Reason)
			}
			return
		}
		if len(alerts) == 0 || len(alerts) > MaxAlertsPerPayload {
			t.Fatalf("success with %d alerts", len(alerts))
		}
		for i, a := range alerts {
			if a.Title == "" || !a.Status.Valid() || a.Fingerprint == "" || a.Labels == nil || a.Annotations == nil {
				t.Fatalf("alert %d: %+v", i, a)
			}
			if a.Severity != SeverityUnknown && !a.Severity.Known() {
				t.Fatalf("alert %d: severity %d", i, a.Severity)
			}
			var r Router
			r.Route(&alerts[i])
		}
	})
}

func FuzzDecodeAlertmanager(f *testing.F) { fuzzDecoder(f, DecodeAlertmanager) }

func FuzzDecodeGrafana(f *testing.F) { fuzzDecoder(f, DecodeGrafana) }

func FuzzDecodeGeneric(f *testing.F) { fuzzDecoder(f, DecodeGeneric) }

func FuzzParseSeverity(f *testing.F) {
	for _, s := range []string{"critical", "SEV-2", "Severity 3", "severity: 3", "P1", "5", "sev0 critical", "SEV3 warning", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sev, ok := ParseSeverity(s)
		if ok != sev.Known() {
			t.Fatalf("ParseSeverity(%q) = %d, %v", s, sev, ok)
		}
		if ok {
			if back, ok := ParseSeverity(sev.String()); !ok || back != sev {
				t.Fatalf("%q: %v does not round-trip", s, sev)
			}
		}
	})
}
