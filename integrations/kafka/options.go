package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/IBM/sarama"
	gometrics "github.com/rcrowley/go-metrics"
	"github.com/xdg-go/scram"
)

// Defaults applied to zero fields of ClusterOptions, Pipeline and the evaluator.
const (
	DefaultClientID   = "streamwatch"
	DefaultTimeout    = 5 * time.Second
	DefaultStallAfter = 5 * time.Minute
	// DefaultAllowedLag is the lag of a caught-up consumer of a topic with transactions: the
	// commit marker after the last record is never delivered, so lag stays at 1.
	DefaultAllowedLag = 1
)

// SASL mechanisms accepted by SASLOptions.Mechanism.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// ClusterOptions describe one cluster of the config contract
// (kafka.clusters.NAME). The package does not read configuration files: the
// config package fills these.
type ClusterOptions struct {
	Name     string
	Brokers  []string // host:port, at least one
	Version  string   // Kafka protocol version such as "3.6.0"; "" means sarama's default (2.8.0)
	ClientID string   // "" means DefaultClientID
	// Timeout bounds each network step (dial, one request's answer). A
	// call's context may cut it shorter. 0 means DefaultTimeout.
	Timeout time.Duration
	TLS     TLSOptions
	SASL    SASLOptions
}

// TLSOptions enable TLS, optionally with a private CA and a client certificate.
type TLSOptions struct {
	Enabled  bool
	CAFile   string // PEM; "" means the system roots
	CertFile string // PEM client certificate; needs KeyFile
	KeyFile  string
}

// SASLOptions enable SASL. The password is read from the environment
// variable PasswordEnv when the clusters are built, never from configuration.
type SASLOptions struct {
	Mechanism   string // "" (no SASL), PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	Username    string
	PasswordEnv string
}

// Pipeline is the Kafka side of one configured pipeline
// (pipelines[].kafka in the config contract).
type Pipeline struct {
	Name       string
	Cluster    string
	Topics     []string
	Group      string        // the documented consumer group
	StallAfter time.Duration // 0 means DefaultStallAfter
	// AllowedLag is the lag at which the group still counts as caught up (config default 1);
	// a negative value means DefaultAllowedLag.
	AllowedLag int64
}

func (p Pipeline) allowedLag() int64 {
	if p.AllowedLag < 0 {
		return DefaultAllowedLag
	}
	return p.AllowedLag
}

func (p Pipeline) stallAfter() time.Duration {
	if p.StallAfter > 0 {
		return p.StallAfter
	}
	return DefaultStallAfter
}

// saramaConfig validates o and builds the sarama configuration for it.
// Secrets come from getenv. Files named by the TLS options are read here, so
// a missing certificate is reported at start-up, not at the first command.
func (o ClusterOptions) saramaConfig(getenv func(string) string) (*sarama.Config, error) {
	if o.Name == "" {
		return nil, errors.New("cluster has no name")
	}
	if len(o.Brokers) == 0 {
		return nil, fmt.Errorf("cluster %s: no brokers", o.Name)
	}
	for _, b := range o.Brokers {
		if !strings.Contains(b, ":") {
			return nil, fmt.Errorf("cluster %s: broker %q is not host:port", o.Name, b)
		}
	}
	cfg := sarama.NewConfig()
	if o.Version != "" {
		v, err := sarama.ParseKafkaVersion(o.Version)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: version %q: %w", o.Name, o.Version, err)
		}
		cfg.Version = v
	}
	cfg.ClientID = o.ClientID
	if cfg.ClientID == "" {
		cfg.ClientID = DefaultClientID
	}
	timeout := o.timeout()
	cfg.Net.DialTimeout = timeout
	cfg.Net.ReadTimeout = timeout
	cfg.Net.WriteTimeout = timeout
	// Only the topics asked about are loaded: a bot has no use for the
	// metadata of every topic of a large cluster, and the client connects
	// nothing until it is first used, so a cluster that is down does not
	// delay start-up.
	cfg.Metadata.Full = false
	cfg.Metadata.Retry.Max = 1
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	cfg.Metadata.Timeout = 2 * timeout
	cfg.Admin.Timeout = timeout

	if o.TLS.Enabled {
		tc, err := o.TLS.config()
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", o.Name, err)
		}
		cfg.Net.TLS.Enable = true
		cfg.Net.TLS.Config = tc
	}
	if o.SASL.Mechanism != "" {
		if err := o.SASL.apply(cfg, getenv); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", o.Name, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", o.Name, err)
	}
	return cfg, nil
}

func (o ClusterOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (t TLSOptions) config() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read tls ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca_file %s holds no PEM certificate", t.CAFile)
		}
		tc.RootCAs = pool
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("tls cert_file and key_file go together")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load tls client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

func (s SASLOptions) apply(cfg *sarama.Config, getenv func(string) string) error {
	if s.Username == "" {
		return fmt.Errorf("sasl %s needs a username", s.Mechanism)
	}
	if s.PasswordEnv == "" {
		return fmt.Errorf("sasl %s needs password_env", s.Mechanism)
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	password := getenv(s.PasswordEnv)
	if password == "" {
		return fmt.Errorf("sasl password: environment variable %s is empty or unset", s.PasswordEnv)
	}
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Handshake = true
	cfg.Net.SASL.Version = sarama.SASLHandshakeV1
	cfg.Net.SASL.User = s.Username
	cfg.Net.SASL.Password = password
	switch strings.ToUpper(s.Mechanism) {
	case SASLPlain:
		cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	case SASLScramSHA256:
		cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(scram.SHA256) }
	case SASLScramSHA512:
		cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return newSCRAMClient(scram.SHA512) }
	default:
		return fmt.Errorf("sasl mechanism %q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", s.Mechanism)
	}
	return nil
}

// sarama measures every broker connection with go-metrics meters, which a process-wide
// goroutine ticks and keeps forever: every reconnection to a broker would add meters that are
// never freed, and the goroutine outlives every client. streamwatch reads none of them.
func init() { gometrics.UseNilMetrics = true }
