package config

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

var allNeeds = SecretNeeds{Slack: true, Redis: true, WebhookToken: true}

func goodEnv() map[string]string {
	return map[string]string{
		EnvSlackBotToken: "xoxb-1111-2222-bottoken",
		EnvSlackAppToken: "xapp-1-A111-apptoken",
		EnvRedisURL:      "rediss://bot:s3cret-redis-pw@redis.internal:6380/2",
		EnvWebhookToken:  "whk-0123456789abcdef",
		EnvSlackAPIURL:   "http://127.0.0.1:9999/api",
		"KAFKA_PASSWORD": "kafka pass phrase",
	}
}

func TestLoadSecrets(t *testing.T) {
	vars := goodEnv()
	s, err := LoadSecrets(env(vars), SecretNeeds{Slack: true, Redis: true, WebhookToken: true, KafkaPasswordEnv: []string{"KAFKA_PASSWORD"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.SlackBotToken != vars[EnvSlackBotToken] || s.SlackAppToken != vars[EnvSlackAppToken] ||
		s.WebhookToken != vars[EnvWebhookToken] || s.RedisURL != vars[EnvRedisURL] {
		t.Errorf("secrets not read as set")
	}
	if s.SlackAPIURL != "http://127.0.0.1:9999/api/" {
		t.Errorf("SlackAPIURL = %q, want a trailing slash added", s.SlackAPIURL)
	}
	if s.Redis == nil || !reflect.DeepEqual(s.Redis.Addrs, []string{"redis.internal:6380"}) || s.Redis.IsClusterMode ||
		s.Redis.DB != 2 || s.Redis.Username != "bot" || s.Redis.Password != "s3cret-redis-pw" || s.Redis.TLSConfig == nil {
		t.Errorf("Redis options = %+v", s.Redis)
	}
	if got := s.KafkaPasswords["KAFKA_PASSWORD"]; got != "kafka pass phrase" {
		t.Errorf("kafka password not read")
	}
	wantValues := []string{vars[EnvSlackBotToken], vars[EnvSlackAppToken], vars[EnvRedisURL], "s3cret-redis-pw",
		vars[EnvWebhookToken], "kafka pass phrase"}
	if got := s.Values(); !reflect.DeepEqual(got, wantValues) {
		t.Errorf("Values() = %q, want %q", got, wantValues)
	}
}

func TestLoadSecretsOptional(t *testing.T) {
	s, err := LoadSecrets(env(nil), SecretNeeds{})
	if err != nil {
		t.Fatalf("nothing needed, nothing set: %v", err)
	}
	if s.Redis != nil || s.SlackAPIURL != "" || len(s.Values()) != 0 {
		t.Errorf("secrets from an empty environment: %#v / %v", s.Redis, s.Values())
	}
}

func TestLoadSecretsErrors(t *testing.T) {
	tests := []struct {
		name  string
		set   map[string]string // overrides goodEnv; "" unsets
		needs SecretNeeds
		env   string
		msg   string
	}{
		{"bot token missing", map[string]string{EnvSlackBotToken: ""}, allNeeds, EnvSlackBotToken, "not set"},
		{"app token missing", map[string]string{EnvSlackAppToken: ""}, allNeeds, EnvSlackAppToken, "not set"},
		{"redis missing", map[string]string{EnvRedisURL: ""}, allNeeds, EnvRedisURL, "not set"},
		{"webhook token missing", map[string]string{EnvWebhookToken: ""}, allNeeds, EnvWebhookToken, "not set"},
		{"kafka password missing", nil, SecretNeeds{KafkaPasswordEnv: []string{"KAFKA_OTHER"}}, "KAFKA_OTHER",
			"not set (named by a kafka sasl.password_env)"},
		{"escalation webhook URL missing", nil, SecretNeeds{EscalationWebhookEnv: "PAGERDUTY_EVENTS_URL"}, "PAGERDUTY_EVENTS_URL",
			"not set (named by slack.escalation.webhook.url_env)"},
		{"escalation webhook URL not a URL", map[string]string{"PAGERDUTY_EVENTS_URL": "events.pagerduty.com/secretvalue"},
			SecretNeeds{EscalationWebhookEnv: "PAGERDUTY_EVENTS_URL"}, "PAGERDUTY_EVENTS_URL",
			"must be an http:// or https:// URL (named by slack.escalation.webhook.url_env)"},
		{"bot token is an app token", map[string]string{EnvSlackBotToken: "xapp-1-A111-secretvalue"}, allNeeds,
			EnvSlackBotToken, `must be a token starting with "xoxb-"`},
		{"app token is a user token", map[string]string{EnvSlackAppToken: "xoxp-secretvalue"}, allNeeds,
			EnvSlackAppToken, `must be a token starting with "xapp-"`},
		{"bad token checked even when not needed", map[string]string{EnvSlackBotToken: "secretvalue"}, SecretNeeds{},
			EnvSlackBotToken, `must be a token starting with "xoxb-"`},
		{"token with newline", map[string]string{EnvSlackBotToken: "xoxb-secretvalue\n"}, allNeeds,
			EnvSlackBotToken, "contains whitespace"},
		{"redis scheme", map[string]string{EnvRedisURL: "http://:secretvalue@redis:6379"}, allNeeds,
			EnvRedisURL, "must be a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL"},
		{"redis unparseable", map[string]string{EnvRedisURL: "redis://:secretvalue@redis:port"}, allNeeds,
			EnvRedisURL, "is not a valid URL (want redis://[user:password@]host:port[/db], rediss://… or redis+sentinel://…)"},
		{"redis bad database", map[string]string{EnvRedisURL: "redis://u:secretvalue@redis:6379/zero"}, allNeeds,
			EnvRedisURL, `is not a valid Redis URL: redis: invalid database number: "zero"`},
		{"redis unknown option", map[string]string{EnvRedisURL: "redis://u:secretvalue@redis:6379/0?colour=blue"}, allNeeds,
			EnvRedisURL, "is not a valid Redis URL: redis: unexpected option: colour"},
		{"redis without host", map[string]string{EnvRedisURL: "redis:secretvalue"}, allNeeds,
			EnvRedisURL, "has no host (want redis://[user:password@]host:port[/db])"},
		{"redis cluster flag", map[string]string{EnvRedisURL: "redis://u:secretvalue@redis:6379?cluster=yes"}, allNeeds,
			EnvRedisURL, "has an invalid cluster option (want cluster=true or cluster=false, once)"},
		{"redis cluster false with addr", map[string]string{EnvRedisURL: "redis://u:secretvalue@r1:7001?cluster=false&addr=r2:7002"}, allNeeds,
			EnvRedisURL, "has cluster=false and addr= options (addr= lists more nodes of a cluster)"},
		{"redis cluster database", map[string]string{EnvRedisURL: "redis://u:secretvalue@r1:7001/3?addr=r2:7002"}, allNeeds,
			EnvRedisURL, "names a database other than 0, but a Redis Cluster has only database 0"},
		{"redis cluster bad addr", map[string]string{EnvRedisURL: "redis://u:secretvalue@r1:7001?addr=r2"}, allNeeds,
			EnvRedisURL, "is not a valid Redis URL: redis: unable to parse addr param: r2"},
		{"redis cluster db option", map[string]string{EnvRedisURL: "rediss://u:secretvalue@r1:7001?cluster=true&db=1"}, allNeeds,
			EnvRedisURL, "is not a valid Redis URL: redis: unexpected option: db"},
		{"slack api url", map[string]string{EnvSlackAPIURL: "127.0.0.1:9999/secretvalue"}, allNeeds,
			EnvSlackAPIURL, "must be an http:// or https:// URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := goodEnv()
			for k, v := range tt.set {
				vars[k] = v
			}
			_, err := LoadSecrets(env(vars), tt.needs)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("LoadSecrets error = %v, want Errors", err)
			}
			if !errs.Has(tt.env, tt.msg) {
				t.Errorf("want %s: %s\ngot:\n%v", tt.env, tt.msg, errs)
			}
			for _, v := range tt.set {
				if v != "" && strings.Contains(err.Error(), strings.TrimSpace(v)) {
					t.Errorf("error contains the value %q:\n%v", v, err)
				}
			}
			if strings.Contains(err.Error(), "secretvalue") {
				t.Errorf("error contains part of a secret:\n%v", err)
			}
		})
	}
}

func TestLoadSecretsReportsEveryProblem(t *testing.T) {
	_, err := LoadSecrets(env(map[string]string{EnvSlackAppToken: "bad"}), allNeeds)
	want := "SLACK_BOT_TOKEN: not set\n" +
		"SLACK_APP_TOKEN: must be a token starting with \"xapp-\"\n" +
		"REDIS_URL: not set\n" +
		"STREAMWATCH_WEBHOOK_TOKEN: not set"
	if err == nil || err.Error() != want {
		t.Errorf("LoadSecrets error:\n%v\nwant:\n%s", err, want)
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	s, err := LoadSecrets(env(goodEnv()), SecretNeeds{KafkaPasswordEnv: []string{"KAFKA_PASSWORD"}})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		l := slog.New(h)
		l.Info("loaded", "secrets", s, "ptr", &s)
		l.Info("nested", "v", struct{ S Secrets }{s})
		l.Info("group", slog.Group("g", slog.Any("s", s)))
	}
	prints := []string{logs.String()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		prints = append(prints, fmt.Sprintf(verb, s), fmt.Sprintf(verb, &s))
	}
	prints = append(prints, fmt.Sprint(s), fmt.Sprintf("%+v", struct{ S Secrets }{s}), fmt.Sprintf("%v", []Secrets{s}))
	js, err := json.Marshal(map[string]any{"s": s})
	if err != nil {
		t.Fatal(err)
	}
	prints = append(prints, string(js))

	for _, out := range prints {
		for _, v := range s.Values() {
			if strings.Contains(out, v) {
				t.Errorf("secret %q printed in %q", v, out)
			}
		}
		if !strings.Contains(out, "[redacted]") {
			t.Errorf("%q does not say [redacted]", out)
		}
	}
}

func TestConfigSecretNeeds(t *testing.T) {
	cfg, err := Parse([]byte(head + `
http: {allow_unauthenticated_webhooks: true}
kafka:
  clusters:
    a: {brokers: ["k:1"], sasl: {mechanism: PLAIN, username: u, password_env: KAFKA_A}}
    b: {brokers: ["k:2"], sasl: {mechanism: PLAIN, username: u, password_env: KAFKA_A}}
    c: {brokers: ["k:3"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := SecretNeeds{Slack: true, Redis: true, KafkaPasswordEnv: []string{"KAFKA_A"}}
	if got := cfg.SecretNeeds(); !reflect.DeepEqual(got, want) {
		t.Errorf("SecretNeeds() = %+v, want %+v", got, want)
	}
}

func TestParseRedisURL(t *testing.T) {
	tests := []struct {
		url       string
		addrs     []string
		cluster   bool
		db        int
		user, pw  string
		tls       bool
		serverTLS string
	}{
		{url: "redis://127.0.0.1:6390/0", addrs: []string{"127.0.0.1:6390"}},
		{url: "redis://redis", addrs: []string{"redis:6379"}},
		{url: "redis://:p%40ss@redis:6390/4", addrs: []string{"redis:6390"}, db: 4, pw: "p@ss"},
		{url: "redis://alice:alice-pw@redis:6390/0", addrs: []string{"redis:6390"}, user: "alice", pw: "alice-pw"},
		{url: "rediss://redis.internal:6380/1", addrs: []string{"redis.internal:6380"}, db: 1, tls: true, serverTLS: "redis.internal"},
		{url: "redis://:pw@r1:7001?addr=r2:7002&addr=r3:7003", addrs: []string{"r1:7001", "r2:7002", "r3:7003"}, cluster: true, pw: "pw"},
		{url: "redis://r1:7001/0?addr=r2:7002&cluster=true", addrs: []string{"r1:7001", "r2:7002"}, cluster: true},
		{url: "redis://clustercfg.example:6379?cluster=true", addrs: []string{"clustercfg.example:6379"}, cluster: true},
		{url: "rediss://u:pw@r1:7001/?addr=r2:7002", addrs: []string{"r1:7001", "r2:7002"}, cluster: true, user: "u", pw: "pw", tls: true, serverTLS: "r1"},
		{url: "redis://r1:6379?cluster=false", addrs: []string{"r1:6379"}},
	}
	for _, tt := range tests {
		o, err := ParseRedisURL(tt.url)
		if err != nil {
			t.Errorf("%s: %v", tt.url, err)
			continue
		}
		if !reflect.DeepEqual(o.Addrs, tt.addrs) || o.IsClusterMode != tt.cluster || o.DB != tt.db ||
			o.Username != tt.user || o.Password != tt.pw || (o.TLSConfig != nil) != tt.tls {
			t.Errorf("%s: Addrs %v cluster %v DB %d user %q password %q TLS %v", tt.url, o.Addrs, o.IsClusterMode, o.DB, o.Username, o.Password, o.TLSConfig != nil)
		}
		if tt.tls && o.TLSConfig.ServerName != tt.serverTLS {
			t.Errorf("%s: TLS ServerName %q, want %q", tt.url, o.TLSConfig.ServerName, tt.serverTLS)
		}
	}
	// go-redis's query options are kept, for one server and for a cluster.
	o, err := ParseRedisURL("redis://r:1/0?dial_timeout=5s&max_retries=4&pool_size=7")
	if err != nil || o.DialTimeout != 5*time.Second || o.MaxRetries != 4 || o.PoolSize != 7 {
		t.Errorf("options of one server: %+v %v", o, err)
	}
	o, err = ParseRedisURL("redis://r1:1?addr=r2:2&read_timeout=6s&route_randomly=true&max_redirects=2")
	if err != nil || o.ReadTimeout != 6*time.Second || !o.RouteRandomly || o.MaxRedirects != 2 {
		t.Errorf("options of a cluster: %+v %v", o, err)
	}
}

// writeCA writes a self-signed CA certificate as PEM and returns its file and the certificate.
func writeCA(t *testing.T) (string, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, cert
}

func TestLoadSecretsRedisTLSCAFile(t *testing.T) {
	caFile, ca := writeCA(t)
	for _, url := range []string{"rediss://:pw@127.0.0.1:6380/0", "rediss://127.0.0.1:7001?addr=127.0.0.1:7002"} {
		vars := goodEnv()
		vars[EnvRedisURL], vars[EnvRedisTLSCAFile] = url, caFile
		s, err := LoadSecrets(env(vars), allNeeds)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		want := x509.NewCertPool()
		want.AddCert(ca)
		if s.Redis.TLSConfig == nil || !s.Redis.TLSConfig.RootCAs.Equal(want) {
			t.Errorf("%s: TLS roots are not the CA file's", url)
		}
	}
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ url, file, msg string }{
		{"rediss://127.0.0.1:6380/0", "/nonexistent/ca.pem", "cannot be read: open /nonexistent/ca.pem: no such file or directory"},
		{"rediss://127.0.0.1:6380/0", notPEM, notPEM + " holds no PEM certificate"},
		{"rediss://127.0.0.1:6380/0", caFile + "\n", "has whitespace around the file name"},
		{"redis://127.0.0.1:6379/0", caFile, "is set but REDIS_URL is not a rediss:// or rediss+sentinel:// (TLS) URL"},
	} {
		vars := goodEnv()
		vars[EnvRedisURL], vars[EnvRedisTLSCAFile] = tt.url, tt.file
		_, err := LoadSecrets(env(vars), allNeeds)
		var errs Errors
		if !errors.As(err, &errs) || !errs.Has(EnvRedisTLSCAFile, tt.msg) {
			t.Errorf("%s with %q: %v, want %s: %s", tt.url, tt.file, err, EnvRedisTLSCAFile, tt.msg)
		}
	}
}
