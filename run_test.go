package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
)

func runCapture(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"streamwatch"}, args...), func(k string) string { return env[k] }, &out, &errb)
	return out.String(), errb.String(), err
}

func TestCheckConfig(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte(`slack:
  default_channel: C1
alerts:
  routes:
    - match_re: {alertname: "("}
      pipeline: a
pipelines:
  - name: a
    channel: C1
  - name: b
    chanel: C2
`), 0o600)
	cases := []struct {
		name     string
		file     string
		wantErr  bool
		wantCode int
		want     []string
	}{
		{"the contract sketch", "config/testdata/config-sketch.yaml", false, 0, []string{"ok (1 pipeline)"}},
		{"the example", "deploy/config.example.yaml", false, 0, []string{"ok"}},
		{"every problem by path", bad, true, 1, []string{
			"alerts.routes[0].match_re.alertname: invalid regexp",
			`pipelines[1].chanel: unknown key "chanel"`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(c.file); err != nil {
				t.Fatalf("missing %s: %v", c.file, err)
			}
			out, _, err := runCapture(t, nil, "check-config", "--config", c.file)
			if (err != nil) != c.wantErr || (err != nil && exitCode(err) != c.wantCode) {
				t.Fatalf("err = %v (exit %d), want error %v exit %d\n%s", err, exitCode(err), c.wantErr, c.wantCode, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestCheckConfigValidatesRedisURL: check-config reads REDIS_URL when it is set, says where
// it points (Sentinels and their master, a cluster, one server) and names what is wrong with
// it, never the password.
func TestCheckConfigValidatesRedisURL(t *testing.T) {
	cases := []struct {
		url     string
		wantErr bool
		want    string
	}{
		{"redis+sentinel://:hunter2pass@redis-headless:26379/mymaster", false,
			"REDIS_URL: ok (Sentinels redis-headless:26379 (master mymaster, database 0))"},
		{"rediss+sentinel://s1:26379,s2:26379/mymaster/2", false, "REDIS_URL: ok (Sentinels s1:26379, s2:26379 (master mymaster, database 2), TLS)"},
		{"redis://:hunter2pass@r1:7001?addr=r2:7002", false, "REDIS_URL: ok (a Redis Cluster seeded by r1:7001, r2:7002)"},
		{"redis://:hunter2pass@redis:6379/1", false, "REDIS_URL: ok (one server, redis:6379 (database 1))"},
		{"redis+sentinel://:hunter2pass@s1:26379", true, "REDIS_URL: names no master (want redis+sentinel://[user:password@]host1:26379,host2:26379/mastername[/db]: the name the Sentinels monitor the primary by, such as mymaster)"},
		{"redis+sentinel://:hunter2pass@s1:x/mymaster", true, `REDIS_URL: has a Sentinel address, "s1:x", that is not host:port`},
	}
	for _, c := range cases {
		out, _, err := runCapture(t, map[string]string{"REDIS_URL": c.url}, "check-config", "--config", "config/testdata/config-sketch.yaml")
		if (err != nil) != c.wantErr || (err != nil && exitCode(err) != 1) {
			t.Errorf("%s: err = %v, want error %v\n%s", c.url, err, c.wantErr, out)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: output lacks %q:\n%s", c.url, c.want, out)
		}
		if strings.Contains(out, "hunter2pass") || (err != nil && strings.Contains(err.Error(), "hunter2pass")) {
			t.Errorf("%s: check-config shows the password:\n%s", c.url, out)
		}
	}
}

func TestConfigFromEnvironmentAndVersion(t *testing.T) {
	out, _, err := runCapture(t, map[string]string{"STREAMWATCH_CONFIG": "deploy/config.example.yaml"}, "check-config")
	if err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("STREAMWATCH_CONFIG not used: %v %s", err, out)
	}
	out, _, err = runCapture(t, nil, "version")
	if err != nil || !strings.HasPrefix(out, "streamwatch ") {
		t.Fatalf("version: %q %v", out, err)
	}
	_, _, err = runCapture(t, nil, "frobnicate")
	if err == nil || exitCode(err) != 2 {
		t.Fatalf("unknown command: %v", err)
	}
}

// TestServeRefusesBadEnvironment: a missing or malformed secret stops start-up with a message
// naming the variable and never its value.
func TestServeRefusesBadEnvironment(t *testing.T) {
	good := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-1-secretvalue", "SLACK_APP_TOKEN": "xapp-1-secretvalue",
		"REDIS_URL": "redis://:hunter2pass@127.0.0.1:1/0", "STREAMWATCH_WEBHOOK_TOKEN": "tok-secretvalue",
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no webhook token", with("STREAMWATCH_WEBHOOK_TOKEN", ""), "STREAMWATCH_WEBHOOK_TOKEN"},
		{"no bot token", with("SLACK_BOT_TOKEN", ""), "SLACK_BOT_TOKEN"},
		{"app token in the bot slot", with("SLACK_BOT_TOKEN", "xapp-1-secretvalue"), "SLACK_BOT_TOKEN"},
		{"malformed redis url", with("REDIS_URL", "http://:hunter2pass@x"), "REDIS_URL"},
		{"no redis url", with("REDIS_URL", ""), "REDIS_URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := runCapture(t, c.env, "serve", "--config", "deploy/config.example.yaml")
			if err == nil {
				t.Fatal("serve started")
			}
			msg := err.Error() + out + errOut
			if !strings.Contains(msg, c.want) {
				t.Fatalf("error does not name %s: %v", c.want, err)
			}
			for _, secret := range []string{"secretvalue", "hunter2pass"} {
				if strings.Contains(msg, secret) {
					t.Fatalf("error shows a secret: %v", err)
				}
			}
		})
	}
}

// TestProbeCommandLine: `streamwatch probe --config FILE PIPELINE` exits 0 on OK and 1 on
// FAILED, printing every step.
func TestProbeCommandLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cp")
	spec := sparktest.Spec{Start: time.Now().Add(-5 * time.Minute), LatestBatch: 2, LatestCommit: 2,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 2, RecordsPerBatch: 5}}}
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("slack: {default_channel: C1}\npipelines:\n  - name: p\n    checkpoint: {location: "+dir+"}\n"), 0o600)
	out, _, err := runCapture(t, nil, "probe", "p", "--config", cfg)
	if err != nil || !strings.Contains(out, "OK") || !strings.Contains(out, "write") {
		t.Fatalf("healthy probe: %v\n%s", err, out)
	}
	os.RemoveAll(dir)
	out, _, err = runCapture(t, nil, "probe", "--config", cfg, "p")
	if err == nil || exitCode(err) != 1 || !strings.Contains(out, "NOT_FOUND") {
		t.Fatalf("missing checkpoint: %v (exit %d)\n%s", err, exitCode(err), out)
	}
}
