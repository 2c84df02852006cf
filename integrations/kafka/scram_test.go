package kafka

import (
	"strings"
	"testing"

	"github.com/xdg-go/scram"
)

// TestSCRAMClientSASLprep runs a whole conversation against xdg-go/scram's own server, whose
// stored credentials were made from the SASLprep'd password: a client that sends the raw
// password (U+00AD soft hyphen and U+00A0 no-break space are mapped by SASLprep) would fail.
func TestSCRAMClientSASLprep(t *testing.T) {
	for _, tc := range []struct {
		name string
		hash scram.HashGeneratorFcn
	}{{"SHA-256", scram.SHA256}, {"SHA-512", scram.SHA512}} {
		t.Run(tc.name, func(t *testing.T) {
			stored, err := tc.hash.NewClient("user", "pass word", "") // what SASLprep makes of the typed one
			if err != nil {
				t.Fatal(err)
			}
			creds, err := stored.GetStoredCredentialsWithError(scram.KeyFactors{Salt: "NaCl-and-pepper", Iters: 4096})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := tc.hash.NewServer(func(user string) (scram.StoredCredentials, error) { return creds, nil })
			if err != nil {
				t.Fatal(err)
			}
			for _, pw := range []struct {
				typed string
				ok    bool
			}{{"pa\u00adss\u00a0word", true}, {"pass-word", false}} {
				server := srv.NewConversation()
				c := newSCRAMClient(tc.hash)
				if err := c.Begin("user", pw.typed, ""); err != nil {
					t.Fatal(err)
				}
				msg, err := c.Step("")
				for err == nil && !c.Done() {
					var reply string
					if reply, err = server.Step(msg); err != nil {
						break
					}
					msg, err = c.Step(reply)
				}
				if pw.ok && (err != nil || !c.Done() || !server.Valid()) {
					t.Fatalf("password %q: err %v, done %v, server valid %v", pw.typed, err, c.Done(), server.Valid())
				}
				if !pw.ok && (err == nil || server.Valid()) {
					t.Fatalf("password %q accepted", pw.typed)
				}
			}
		})
	}
	if err := newSCRAMClient(scram.SHA256).Begin("user", "bell\x07", ""); err == nil || !strings.HasPrefix(err.Error(), "scram: ") {
		t.Fatalf("a prohibited password: %v", err)
	}
}
