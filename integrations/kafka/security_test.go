package kafka

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

func TestSASL(t *testing.T) {
	t.Parallel()
	kc := newKfake(t, kfake.EnableSASL(),
		kfake.Superuser(SASLScramSHA256, "alice", "alice-secret"),
		kfake.Superuser(SASLScramSHA512, "bob", "bob-secret"),
		kfake.Superuser(SASLPlain, "carol", "carol-secret"),
		kfake.Superuser(SASLScramSHA512, "dora", "pässwörd-ü"),
		kfake.SeedTopics(2, "secured"))
	env := map[string]string{"DORA_PW": "pässwörd-ü", "CTRL_PW": "bell\x07", "ALICE_PW": "alice-secret", "BOB_PW": "bob-secret", "CAROL_PW": "carol-secret", "WRONG_PW": "nope"}
	getenv := func(k string) string { return env[k] }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, tc := range []struct {
		mechanism, user, env string
		ok                   bool
	}{
		{SASLScramSHA256, "alice", "ALICE_PW", true},
		{SASLScramSHA512, "bob", "BOB_PW", true},
		{SASLPlain, "carol", "CAROL_PW", true},
		{SASLScramSHA512, "dora", "DORA_PW", true}, // a non-ASCII password SASLprep leaves as it is
		{SASLScramSHA256, "alice", "WRONG_PW", false},
		{SASLPlain, "carol", "WRONG_PW", false},
	} {
		t.Run(tc.mechanism+"/"+tc.env, func(t *testing.T) {
			opts := testClusterOptions(kc, "secure")
			opts.SASL = SASLOptions{Mechanism: tc.mechanism, Username: tc.user, PasswordEnv: tc.env}
			cs, err := NewClusters([]ClusterOptions{opts}, ClustersOptions{Getenv: getenv})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			c, _ := cs.Cluster("secure")
			off, err := c.Offsets(ctx, "g", "secured")
			if tc.ok {
				if err != nil || len(off.Partitions) != 2 {
					t.Fatalf("offsets: %v %+v", err, off)
				}
				return
			}
			if !errors.Is(err, ErrAuth) || Retryable(err) {
				t.Fatalf("err = %v, want a non-retryable authentication failure", err)
			}
			if !strings.Contains(err.Error(), "authentication as \""+tc.user+"\" ("+tc.mechanism+") failed") ||
				strings.Contains(err.Error(), "nope") {
				t.Errorf("err = %q, want the user and mechanism named and no password", err)
			}
		})
	}

	// A password SASLprep prohibits (a control character) fails before anything is sent.
	t.Run("SASLprep refusal", func(t *testing.T) {
		opts := testClusterOptions(kc, "secure")
		opts.SASL = SASLOptions{Mechanism: SASLScramSHA256, Username: "alice", PasswordEnv: "CTRL_PW"}
		cs, err := NewClusters([]ClusterOptions{opts}, ClustersOptions{Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		c, _ := cs.Cluster("secure")
		_, err = c.Offsets(ctx, "g", "secured")
		if !errors.Is(err, ErrAuth) || Retryable(err) || strings.Contains(err.Error(), "bell") {
			t.Fatalf("err = %v, want a non-retryable authentication failure without the password", err)
		}
	})

	_, err := NewClusters([]ClusterOptions{{Name: "x", Brokers: []string{"127.0.0.1:9092"},
		SASL: SASLOptions{Mechanism: SASLScramSHA512, Username: "bob", PasswordEnv: "UNSET_PW"}}}, ClustersOptions{Getenv: getenv})
	if err == nil || !strings.Contains(err.Error(), "UNSET_PW") {
		t.Errorf("err = %v, want the unset variable named", err)
	}
	_, err = NewClusters([]ClusterOptions{{Name: "x", Brokers: []string{"127.0.0.1:9092"},
		SASL: SASLOptions{Mechanism: "GSSAPI", Username: "bob", PasswordEnv: "BOB_PW"}}}, ClustersOptions{Getenv: getenv})
	if err == nil || !strings.Contains(err.Error(), "GSSAPI") {
		t.Errorf("err = %v, want the mechanism refused", err)
	}
}

// writePEM writes a certificate or key to dir/name and returns its path.
func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	der  []byte
}

func newTestCA(t *testing.T, name string) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCA{cert: cert, key: key, der: der}
}

func (ca testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (der []byte, key *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage},
		KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := newTestCA(t, "streamwatch test CA")
	serverDER, serverKey := ca.issue(t, "kfake", x509.ExtKeyUsageServerAuth)
	clientDER, clientKey := ca.issue(t, "streamwatch", x509.ExtKeyUsageClientAuth)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	kc := newKfake(t, kfake.SeedTopics(3, "tls-topic"), kfake.TLS(&tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{serverDER}, PrivateKey: serverKey}},
		ClientCAs:    pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	}))
	keyDER, _ := x509.MarshalECPrivateKey(clientKey)
	good := TLSOptions{Enabled: true,
		CAFile:   writePEM(t, dir, "ca.pem", "CERTIFICATE", ca.der),
		CertFile: writePEM(t, dir, "client.pem", "CERTIFICATE", clientDER),
		KeyFile:  writePEM(t, dir, "client-key.pem", "EC PRIVATE KEY", keyDER)}
	other := newTestCA(t, "someone else's CA")
	wrongCA := good
	wrongCA.CAFile = writePEM(t, dir, "other-ca.pem", "CERTIFICATE", other.der)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		tls  TLSOptions
		ok   bool
	}{{"client certificate", good, true}, {"unknown server CA", wrongCA, false}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testClusterOptions(kc, "tls")
			opts.TLS = tc.tls
			cs, err := NewClusters([]ClusterOptions{opts}, ClustersOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			c, _ := cs.Cluster("tls")
			off, err := c.Offsets(ctx, "g", "tls-topic")
			switch {
			case tc.ok && (err != nil || len(off.Partitions) != 3):
				t.Fatalf("offsets: %v", err)
			case !tc.ok && !errors.Is(err, ErrAuth):
				t.Fatalf("err = %v, want a TLS failure counted as authentication", err)
			}
		})
	}

	bad := good
	bad.CAFile = filepath.Join(dir, "missing.pem")
	if _, err := NewClusters([]ClusterOptions{{Name: "tls", Brokers: kc.ListenAddrs(), TLS: bad}}, ClustersOptions{}); err == nil ||
		!strings.Contains(err.Error(), "cluster tls: read tls ca_file") {
		t.Errorf("err = %v, want the missing CA file reported at start-up", err)
	}
}
