package config

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The environment variables streamwatch reads secrets (and the Slack API override) from.
const (
	EnvSlackBotToken = "SLACK_BOT_TOKEN"
	EnvSlackAppToken = "SLACK_APP_TOKEN"
	EnvRedisURL      = "REDIS_URL"
	EnvWebhookToken  = "STREAMWATCH_WEBHOOK_TOKEN"
	EnvSlackAPIURL   = "SLACK_API_URL"
)

// EnvRedisTLSCAFile names a PEM file of the CA certificates that verify a rediss:// server, in
// place of the system roots. It is not a secret.
const EnvRedisTLSCAFile = "REDIS_TLS_CA_FILE"

// redacted replaces a secret wherever one might be printed.
const redacted = "[redacted]"

// SecretNeeds says which secrets must be set. A secret that is set is checked whether or not
// it is needed.
type SecretNeeds struct {
	// Slack needs SLACK_BOT_TOKEN and SLACK_APP_TOKEN.
	Slack bool
	// Redis needs REDIS_URL.
	Redis bool
	// WebhookToken needs STREAMWATCH_WEBHOOK_TOKEN.
	WebhookToken bool
	// KafkaPasswordEnv are the variables named by kafka.clusters.*.sasl.password_env.
	KafkaPasswordEnv []string
	// EscalationWebhookEnv is the variable slack.escalation.webhook.url_env names ("": none).
	EscalationWebhookEnv string
}

// SecretNeeds is what running the bot with this configuration needs: the Slack tokens, Redis,
// the webhook token unless http.allow_unauthenticated_webhooks, and every SASL password.
func (c *Config) SecretNeeds() SecretNeeds {
	need := SecretNeeds{Slack: true, Redis: true, WebhookToken: !c.HTTP.AllowUnauthenticatedWebhooks,
		EscalationWebhookEnv: c.Slack.Escalation.Webhook.URLEnv}
	for _, name := range sortedKeys(c.Kafka.Clusters) {
		if env := c.Kafka.Clusters[name].SASL.PasswordEnv; env != "" && !slices.Contains(need.KafkaPasswordEnv, env) {
			need.KafkaPasswordEnv = append(need.KafkaPasswordEnv, env)
		}
	}
	return need
}

// Secrets are the values that come only from the environment. Every way of printing Secrets
// (fmt verbs, slog, JSON) prints [redacted]; read the fields themselves to use them.
type Secrets struct {
	SlackBotToken string // starts with xoxb-
	SlackAppToken string // starts with xapp-
	// SlackAPIURL overrides Slack's API base URL (tests, the demo); empty means Slack's own.
	// It ends with a slash, as slack-go's OptionAPIURL expects. It is not secret.
	SlackAPIURL string
	RedisURL    string
	// Redis is RedisURL parsed by ParseRedisURL, with REDIS_TLS_CA_FILE's certificates as the
	// TLS roots when it is set; nil when REDIS_URL is not set.
	Redis        *redis.UniversalOptions
	WebhookToken string
	// KafkaPasswords maps a sasl.password_env variable name to its value.
	KafkaPasswords map[string]string
	// EscalationWebhookURL is the URL of slack.escalation.webhook (its url_env's value).
	EscalationWebhookURL string
}

// String returns [redacted].
func (Secrets) String() string { return redacted }

// GoString returns [redacted], for %#v.
func (Secrets) GoString() string { return redacted }

// Format prints [redacted] for every verb, so %d or %x cannot print the fields either.
func (Secrets) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue logs Secrets as [redacted].
func (Secrets) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON encodes Secrets as "[redacted]".
func (Secrets) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// Values returns every secret value that is set (tokens, the Redis URL and its password, SASL
// passwords), for tests that check logs and replies never contain one.
func (s Secrets) Values() []string {
	var vals []string
	add := func(v string) {
		if v != "" && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	add(s.SlackBotToken)
	add(s.SlackAppToken)
	add(s.RedisURL)
	if s.Redis != nil {
		add(s.Redis.Password)
		add(s.Redis.SentinelPassword)
	}
	add(s.WebhookToken)
	for _, env := range sortedKeys(s.KafkaPasswords) {
		add(s.KafkaPasswords[env])
	}
	add(s.EscalationWebhookURL)
	return vals
}

// LoadSecrets reads secrets from getenv (os.Getenv in production). Every variable that need
// requires but is unset, and every variable that is set but malformed, is reported in Errors
// by its name; values never appear in errors.
func LoadSecrets(getenv func(string) string, need SecretNeeds) (Secrets, error) {
	var s Secrets
	var errs Errors
	fail := func(env, format string, args ...any) {
		errs = append(errs, FieldError{Path: env, Msg: fmt.Sprintf(format, args...)})
	}
	// read returns a variable's value if it is set and free of stray whitespace (a classic of
	// values pasted from files).
	read := func(env string, needed bool) (string, bool) {
		val := getenv(env)
		switch {
		case val == "":
			if needed {
				fail(env, "not set")
			}
			return "", false
		case strings.TrimSpace(val) != val || strings.ContainsAny(val, " \t\r\n"):
			fail(env, "contains whitespace")
			return "", false
		}
		return val, true
	}
	token := func(env, prefix string) string {
		val, ok := read(env, need.Slack)
		if ok && (!strings.HasPrefix(val, prefix) || len(val) == len(prefix)) {
			fail(env, "must be a token starting with %q", prefix)
			return ""
		}
		return val
	}

	s.SlackBotToken = token(EnvSlackBotToken, "xoxb-")
	s.SlackAppToken = token(EnvSlackAppToken, "xapp-")
	if val, ok := read(EnvSlackAPIURL, false); ok {
		u, err := url.Parse(val)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fail(EnvSlackAPIURL, "must be an http:// or https:// URL")
		} else {
			s.SlackAPIURL = strings.TrimRight(val, "/") + "/"
		}
	}
	if val, ok := read(EnvRedisURL, need.Redis); ok {
		opts, err := ParseRedisURL(val)
		if err != nil {
			fail(EnvRedisURL, "%s", err)
		} else {
			s.RedisURL, s.Redis = val, opts
		}
	}
	// A file name may contain spaces, so only stray whitespace around it is refused.
	if val := getenv(EnvRedisTLSCAFile); val != "" {
		if strings.TrimSpace(val) != val {
			fail(EnvRedisTLSCAFile, "has whitespace around the file name")
		} else if roots, err := readCAFile(val); err != nil {
			fail(EnvRedisTLSCAFile, "%s", err)
		} else if s.Redis != nil && s.Redis.TLSConfig == nil {
			fail(EnvRedisTLSCAFile, "is set but REDIS_URL is not a rediss:// or rediss+sentinel:// (TLS) URL")
		} else if s.Redis != nil {
			s.Redis.TLSConfig.RootCAs = roots
		}
	}
	if val, ok := read(EnvWebhookToken, need.WebhookToken); ok {
		s.WebhookToken = val
	}
	for _, env := range need.KafkaPasswordEnv {
		// A password may contain spaces, so it skips read's whitespace check.
		if val := getenv(env); val == "" {
			fail(env, "not set (named by a kafka sasl.password_env)")
		} else {
			if s.KafkaPasswords == nil {
				s.KafkaPasswords = map[string]string{}
			}
			s.KafkaPasswords[env] = val
		}
	}
	if env := need.EscalationWebhookEnv; env != "" {
		if val, ok := read(env, true); ok {
			if u, err := url.Parse(val); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				fail(env, "must be an http:// or https:// URL (named by slack.escalation.webhook.url_env)")
			} else {
				s.EscalationWebhookURL = val
			}
		} else if getenv(env) == "" {
			errs[len(errs)-1].Msg = "not set (named by slack.escalation.webhook.url_env)"
		}
	}
	if len(errs) > 0 {
		return Secrets{}, errs
	}
	return s, nil
}

// ParseRedisURL parses REDIS_URL's value into go-redis universal options, with every query
// option go-redis reads kept. The URL names one server, redis://[user:password@]host[:port][/db]
// (rediss:// for TLS), read by redis.ParseURL; or a Redis Cluster, when it has an addr=host:port
// query parameter (each one another seed node) or cluster=true, read by redis.ParseClusterURL:
// the options then have every seed address and IsClusterMode set, and the database must be 0;
// or Sentinels and the master they monitor, redis+sentinel://…/mastername (see
// parseSentinelURL): the options then have MasterName set, which makes
// redis.NewUniversalClient a failover client that follows the primary.
//
// Its errors are safe to show: url.Parse errors quote the whole URL, password included, so they
// are never passed on, and go-redis's own messages are scrubbed of the user name and password.
func ParseRedisURL(val string) (*redis.UniversalOptions, error) {
	if scheme, rest, ok := strings.Cut(val, "://"); ok && (scheme == sentinelScheme || scheme == sentinelTLSScheme) {
		return parseSentinelURL(val, scheme, rest)
	}
	u, err := url.Parse(val)
	if err != nil {
		return nil, errors.New("is not a valid URL (want redis://[user:password@]host:port[/db], rediss://… or redis+sentinel://…)")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, errors.New("must be a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL")
	}
	if u.Host == "" {
		return nil, errors.New("has no host (want redis://[user:password@]host:port[/db])")
	}
	raw, q := val, u.Query()
	cluster := q.Has("addr")
	if q.Has("cluster") {
		switch v := q.Get("cluster"); {
		case len(q["cluster"]) > 1 || (v != "true" && v != "false"):
			return nil, errors.New("has an invalid cluster option (want cluster=true or cluster=false, once)")
		case v == "false" && cluster:
			return nil, errors.New("has cluster=false and addr= options (addr= lists more nodes of a cluster)")
		case v == "true":
			cluster = true
		}
		q.Del("cluster")
		u.RawQuery = q.Encode()
		raw = u.String()
	}
	scrub := func(err error) error { return scrubbed(err, u.User, val, raw) }
	if !cluster {
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, scrub(err)
		}
		return &redis.UniversalOptions{
			Addrs: []string{o.Addr}, DB: o.DB, ClientName: o.ClientName, Protocol: o.Protocol,
			Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig,
			MaxRetries: o.MaxRetries, MinRetryBackoff: o.MinRetryBackoff, MaxRetryBackoff: o.MaxRetryBackoff,
			DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
			PoolFIFO: o.PoolFIFO, PoolSize: o.PoolSize, PoolTimeout: o.PoolTimeout, MaxConcurrentDials: o.MaxConcurrentDials,
			MinIdleConns: o.MinIdleConns, MaxIdleConns: o.MaxIdleConns, MaxActiveConns: o.MaxActiveConns,
			ConnMaxIdleTime: o.ConnMaxIdleTime, ConnMaxLifetime: o.ConnMaxLifetime, ConnMaxLifetimeJitter: o.ConnMaxLifetimeJitter,
			PipelinePoolSize: o.PipelinePoolSize, PipelineReadBufferSize: o.PipelineReadBufferSize,
			PipelineWriteBufferSize: o.PipelineWriteBufferSize,
		}, nil
	}
	// ParseClusterURL ignores the path; a database other than 0 would be silently dropped.
	if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
		return nil, errors.New("names a database other than 0, but a Redis Cluster has only database 0")
	}
	u.Path = ""
	raw = u.String()
	o, err := redis.ParseClusterURL(raw)
	if err != nil {
		return nil, scrub(err)
	}
	return &redis.UniversalOptions{
		Addrs: o.Addrs, IsClusterMode: true, ClientName: o.ClientName, Protocol: o.Protocol,
		Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig,
		MaxRedirects: o.MaxRedirects, ReadOnly: o.ReadOnly, RouteByLatency: o.RouteByLatency,
		RouteByLatencyTolerance: o.RouteByLatencyTolerance, RouteRandomly: o.RouteRandomly,
		MaxRetries: o.MaxRetries, MinRetryBackoff: o.MinRetryBackoff, MaxRetryBackoff: o.MaxRetryBackoff,
		DialTimeout: o.DialTimeout, DialerRetries: o.DialerRetries, DialerRetryTimeout: o.DialerRetryTimeout,
		ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		PoolFIFO: o.PoolFIFO, PoolSize: o.PoolSize, PoolTimeout: o.PoolTimeout, MaxConcurrentDials: o.MaxConcurrentDials,
		MinIdleConns: o.MinIdleConns, MaxIdleConns: o.MaxIdleConns, MaxActiveConns: o.MaxActiveConns,
		ConnMaxIdleTime: o.ConnMaxIdleTime, ConnMaxLifetime: o.ConnMaxLifetime, ConnMaxLifetimeJitter: o.ConnMaxLifetimeJitter,
		PipelinePoolSize: o.PipelinePoolSize, PipelineReadBufferSize: o.PipelineReadBufferSize,
		PipelineWriteBufferSize: o.PipelineWriteBufferSize, FailingTimeoutSeconds: o.FailingTimeoutSeconds,
	}, nil
}

// scrubbed is a go-redis error about the URL val (raw as go-redis read it) without the URL, the
// user information or the password.
func scrubbed(err error, user *url.Userinfo, val, raw string) error {
	msg := err.Error()
	secrets := []string{val, raw}
	if user != nil {
		pw, _ := user.Password()
		secrets = append(secrets, user.String(), pw)
	}
	for _, sec := range secrets {
		if sec != "" {
			msg = strings.ReplaceAll(msg, sec, redacted)
		}
	}
	return errors.New("is not a valid Redis URL: " + msg)
}

// readCAFile reads a PEM bundle of CA certificates.
func readCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return roots, nil
}

// DescribeRedis says where o points, without credentials: "Sentinels a:26379, b:26379 (master
// mymaster, database 0)", "a Redis Cluster seeded by …" or "one server …", and ", TLS".
func DescribeRedis(o *redis.UniversalOptions) string {
	var d string
	switch {
	case o.MasterName != "":
		d = fmt.Sprintf("Sentinels %s (master %s, database %d)", strings.Join(o.Addrs, ", "), o.MasterName, o.DB)
	case o.IsClusterMode:
		d = "a Redis Cluster seeded by " + strings.Join(o.Addrs, ", ")
	default:
		d = fmt.Sprintf("one server, %s (database %d)", strings.Join(o.Addrs, ", "), o.DB)
	}
	if o.TLSConfig != nil {
		d += ", TLS"
	}
	return d
}
