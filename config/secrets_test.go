package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
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
	if s.Redis == nil || s.Redis.Addr != "redis.internal:6380" || s.Redis.DB != 2 || s.Redis.Password != "s3cret-redis-pw" || s.Redis.TLSConfig == nil {
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
		{"bot token is an app token", map[string]string{EnvSlackBotToken: "xapp-1-A111-secretvalue"}, allNeeds,
			EnvSlackBotToken, `must be a token starting with "xoxb-"`},
		{"app token is a user token", map[string]string{EnvSlackAppToken: "xoxp-secretvalue"}, allNeeds,
			EnvSlackAppToken, `must be a token starting with "xapp-"`},
		{"bad token checked even when not needed", map[string]string{EnvSlackBotToken: "secretvalue"}, SecretNeeds{},
			EnvSlackBotToken, `must be a token starting with "xoxb-"`},
		{"token with newline", map[string]string{EnvSlackBotToken: "xoxb-secretvalue\n"}, allNeeds,
			EnvSlackBotToken, "contains whitespace"},
		{"redis scheme", map[string]string{EnvRedisURL: "http://:secretvalue@redis:6379"}, allNeeds,
			EnvRedisURL, "must be a redis:// or rediss:// URL"},
		{"redis unparseable", map[string]string{EnvRedisURL: "redis://:secretvalue@redis:port"}, allNeeds,
			EnvRedisURL, "is not a valid URL (want redis://[user:password@]host:port[/db] or rediss://…)"},
		{"redis bad database", map[string]string{EnvRedisURL: "redis://u:secretvalue@redis:6379/zero"}, allNeeds,
			EnvRedisURL, `is not a valid Redis URL: redis: invalid database number: "zero"`},
		{"redis unknown option", map[string]string{EnvRedisURL: "redis://u:secretvalue@redis:6379/0?colour=blue"}, allNeeds,
			EnvRedisURL, "is not a valid Redis URL: redis: unexpected option: colour"},
		{"redis without host", map[string]string{EnvRedisURL: "redis:secretvalue"}, allNeeds,
			EnvRedisURL, "has no host (want redis://[user:password@]host:port[/db])"},
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
