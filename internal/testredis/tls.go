package testredis

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoTLS means this redis-server was built without TLS support.
var ErrNoTLS = errors.New("redis-server has no TLS support (built without BUILD_TLS=yes)")

// StartTLS runs redis-server serving TLS only (--port 0 --tls-port <free port>), with a server
// certificate for 127.0.0.1 and localhost signed by a throwaway CA (ECDSA P-256, valid for a day)
// written to the server's directory as s.CAFile. Clients need no certificate of their own
// (--tls-auth-clients no). s.URL is rediss://127.0.0.1:<port>/0. The error wraps ErrNoTLS when
// redis-server cannot serve TLS.
func StartTLS(extra ...string) (*Server, error) {
	s, err := start(func(s *Server) ([]string, error) {
		ca, err := writeCertificates(s.dir)
		if err != nil {
			return nil, err
		}
		s.CAFile = filepath.Join(s.dir, "ca.pem")
		s.URL = "rediss://" + s.Addr + "/0"
		s.tls = &tls.Config{RootCAs: ca, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		return append([]string{"--port", "0", "--tls-port", strconv.Itoa(s.Port),
			"--tls-cert-file", filepath.Join(s.dir, "server.pem"), "--tls-key-file", filepath.Join(s.dir, "server-key.pem"),
			"--tls-ca-cert-file", s.CAFile, "--tls-auth-clients", "no"}, extra...), nil
	})
	// A redis-server built without TLS refuses the tls-* directives at start.
	if msg := fmt.Sprint(err); err != nil && (strings.Contains(msg, "Bad directive") && strings.Contains(msg, "tls-") ||
		strings.Contains(msg, "TLS support")) {
		return nil, fmt.Errorf("%w: %w", ErrNoTLS, err)
	}
	return s, err
}

// writeCertificates writes ca.pem, server.pem and server-key.pem to dir and returns the CA as a
// pool.
func writeCertificates(dir string) (*x509.CertPool, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "testredis throwaway CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	for name, block := range map[string]*pem.Block{
		"ca.pem":         {Type: "CERTIFICATE", Bytes: caDER},
		"server.pem":     {Type: "CERTIFICATE", Bytes: der},
		"server-key.pem": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			return nil, err
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return pool, nil
}
