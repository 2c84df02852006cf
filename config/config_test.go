package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// values is cfg without where its keys were written (Where), for comparing decoded values.
func values(cfg *Config) *Config {
	c := *cfg
	c.file, c.lines = "", nil
	return &c
}

func load(t *testing.T, path string) *Config {
	t.Helper()
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return cfg
}

// regexpSources replaces compiled match_re expressions by their sources so configs compare
// with reflect.DeepEqual.
func regexpSources(c *Config) map[int]map[string]string {
	out := map[int]map[string]string{}
	for i := range c.Alerts.Routes {
		r := &c.Alerts.Routes[i]
		if r.MatchRE == nil {
			continue
		}
		out[i] = map[string]string{}
		for k, re := range r.MatchRE {
			out[i][k] = re.String()
		}
		r.MatchRE = nil
	}
	return out
}

func TestParseSketch(t *testing.T) {
	cfg := load(t, "testdata/config-sketch.yaml")
	res := regexpSources(cfg)

	want := &Config{
		HTTP: HTTP{Listen: "127.0.0.1:8080", MaxBodyBytes: 1048576},
		Slack: Slack{
			Command:         "/streamwatch",
			DefaultChannel:  "C0DEFAULT",
			HealthChannel:   "C0HEALTH",
			ThreadCoalesce:  10 * time.Second,
			AllowedChannels: []string{},
			Remediators:     []string{"U0ADMIN"},
			TimeZone:        "UTC",
			Escalation: Escalation{After: 15 * time.Minute, Mention: []string{"S0ONCALL"},
				Severities: []string{"SEV1", "SEV2"},
				Levels:     []EscalationLevel{{After: 30 * time.Minute, Mention: []string{"S0LEADS"}, Repeat: 15 * time.Minute}},
				Webhook:    EscalationWebhook{Format: FormatPagerDuty}},
		},
		Redis: Redis{KeyPrefix: "streamwatch", ReplicaAckTimeout: time.Second},
		Alerts: Alerts{
			GroupBy: []string{"alertname", "pipeline"},
			Routes: []Route{
				{Match: map[string]string{"service": "sms-replies"}, Pipeline: "sms-replies"},
				{Pipeline: "sms-replies"},
			},
			CorrelatePipeline: true,
			IncidentRetention: 2160 * time.Hour,
			Heartbeats:        []Heartbeat{{Match: map[string]string{"alertname": "Watchdog"}, Every: 5 * time.Minute, Channel: "C0DEFAULT"}},
			Flood:             Flood{NewIncidentsPerMinute: 20, ExemptSeverity: "SEV1", QuietFor: 5 * time.Minute},
		},
		Kafka: Kafka{
			SampleInterval: 30 * time.Second,
			Clusters: map[string]KafkaCluster{"main": {
				Brokers:  []string{"127.0.0.1:9092"},
				Version:  "3.6.0",
				ClientID: "streamwatch",
				Timeout:  5 * time.Second,
			}},
		},
		Storage: Storage{S3: S3{Region: "us-east-1", PathStyle: true}},
		Charts:  Charts{Enabled: true, Window: 6 * time.Hour, TimeZone: "UTC"},
		Pipelines: []Pipeline{{
			Name:        "sms-replies",
			Description: "inbound SMS replies, Kafka to Spark Structured Streaming to the datastore",
			Channel:     "C0PIPE",
			Kafka: PipelineKafka{
				Cluster:    "main",
				Topics:     []string{"client.replies.sms"},
				Group:      "sms-replies-prod",
				StallAfter: 5 * time.Minute,
				AllowedLag: 1,
				// publish_group: "" in the sketch
			},
			Checkpoint: Checkpoint{
				Location:       "file:///var/lib/spark/checkpoints/sms-replies",
				StaleAfter:     10 * time.Minute,
				BackupLocation: "file:///var/backups/streamwatch",
				JobUser:        JobUser{UID: 185, GIDs: []int64{185}, Set: true},
			},
			Probe: Probe{
				Schedule:     "@every 5m",
				Write:        true,
				Path:         "file:///var/lib/spark/checkpoints/sms-replies/_streamwatch_probe",
				SlowAfter:    2 * time.Second,
				OpenIncident: true,
			},
			Logs:           Logs{Paths: []string{"/var/log/spark/sms-replies/driver*.log"}, MaxBytes: 8388608},
			DeployedConfig: "/etc/spark/jobs/sms-replies.conf",
			Detect:         Detect{OpenIncident: true, Severity: "SEV2", MaxLag: 15 * time.Minute, HeartbeatAfter: time.Minute, RetentionWarning: "50%"},
			Remediators:    []string{},
		}},
		Health:   Health{DigestSchedule: "0 9 * * 1-5"},
		Diagnose: Diagnose{Timeout: 15 * time.Second},
		Repair:   Repair{BackupMaxAge: time.Hour, ConfirmWithin: 10 * time.Minute, QuietFor: 2 * time.Minute},
	}
	if !reflect.DeepEqual(values(cfg), want) {
		t.Errorf("sketch decoded as\n%+v\nwant\n%+v", cfg, want)
	}
	wantRE := map[int]map[string]string{1: {"alertname": "^(?:^(client replied sms|ReplyPipeline.*)$)$"}}
	if !reflect.DeepEqual(res, wantRE) {
		t.Errorf("match_re = %v, want %v", res, wantRE)
	}
	if !cfg.Pipelines[0].Kafka.Enabled() || !cfg.Pipelines[0].Probe.Enabled() {
		t.Errorf("sketch pipeline: kafka enabled %v, probe enabled %v; want both",
			cfg.Pipelines[0].Kafka.Enabled(), cfg.Pipelines[0].Probe.Enabled())
	}
}

func TestMatchREIsAnchored(t *testing.T) {
	cfg, err := Parse([]byte(`
slack: {default_channel: C0ALERTS}
pipelines: [{name: p}]
alerts:
  routes: [{match_re: {alertname: "Kafka.*|Lag"}, pipeline: p}]
`))
	if err != nil {
		t.Fatal(err)
	}
	re := cfg.Alerts.Routes[0].MatchRE["alertname"]
	for s, want := range map[string]bool{"KafkaLag": true, "Lag": true, "HighLag": false, "Lagging": false, "MyKafka": false} {
		if got := re.MatchString(s); got != want {
			t.Errorf("%s.MatchString(%q) = %v, want %v", re, s, got, want)
		}
	}
}

func TestDefaults(t *testing.T) {
	cfg := load(t, "testdata/minimal.yaml")
	want := &Config{
		HTTP: HTTP{Listen: "127.0.0.1:8080", MaxBodyBytes: 1 << 20},
		Slack: Slack{
			Command:        "/streamwatch",
			DefaultChannel: "C0ALERTS",
			HealthChannel:  "C0ALERTS",
			ThreadCoalesce: 10 * time.Second,
			TimeZone:       "UTC",
			Escalation: Escalation{After: 15 * time.Minute, Severities: []string{"SEV1", "SEV2"},
				Webhook: EscalationWebhook{Format: FormatPagerDuty}},
		},
		Redis: Redis{KeyPrefix: "streamwatch", ReplicaAckTimeout: time.Second},
		Alerts: Alerts{GroupBy: []string{"alertname", "pipeline"}, CorrelatePipeline: true, IncidentRetention: 2160 * time.Hour,
			Flood: Flood{NewIncidentsPerMinute: 20, ExemptSeverity: "SEV1", QuietFor: 5 * time.Minute}},
		Kafka:    Kafka{SampleInterval: 30 * time.Second},
		Storage:  Storage{S3: S3{Region: "us-east-1", PathStyle: true}},
		Charts:   Charts{Enabled: true, Window: 6 * time.Hour, TimeZone: "UTC"},
		Diagnose: Diagnose{Timeout: 15 * time.Second},
		Repair:   Repair{BackupMaxAge: time.Hour, ConfirmWithin: 10 * time.Minute, QuietFor: 2 * time.Minute},
	}
	if !reflect.DeepEqual(values(cfg), want) {
		t.Errorf("minimal config decoded as\n%+v\nwant\n%+v", cfg, want)
	}
}

func TestDefaultsInListsAndMaps(t *testing.T) {
	cfg, err := Parse([]byte(`
slack: {default_channel: C0ALERTS}
kafka:
  clusters:
    main: {brokers: ["k1:9092"]}
pipelines:
  - name: plain
  - name: watched
    kafka: {group: watched-prod}
    checkpoint: {location: /data/checkpoints/watched}
  - name: quiet
    channel: C0QUIET
    checkpoint: {location: "s3://bucket/cp/"}
    probe: {schedule: "", write: false, open_incident: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	wantCluster := KafkaCluster{Brokers: []string{"k1:9092"}, Version: "2.8.0", ClientID: "streamwatch", Timeout: 5 * time.Second}
	if got := cfg.Kafka.Clusters["main"]; !reflect.DeepEqual(got, wantCluster) {
		t.Errorf("cluster = %+v, want %+v", got, wantCluster)
	}
	defaultProbe := Probe{Schedule: "@every 5m", Write: true, SlowAfter: 2 * time.Second, OpenIncident: true}
	tests := []struct {
		name       string
		channel    string
		kafka      PipelineKafka
		checkpoint Checkpoint
		probe      Probe
	}{
		{
			name:       "plain",
			channel:    "C0ALERTS",
			kafka:      PipelineKafka{StallAfter: 5 * time.Minute, AllowedLag: 1},
			checkpoint: Checkpoint{StaleAfter: 10 * time.Minute},
			probe:      defaultProbe,
		},
		{
			name:       "watched",
			channel:    "C0ALERTS",
			kafka:      PipelineKafka{Cluster: "main", Group: "watched-prod", StallAfter: 5 * time.Minute, AllowedLag: 1},
			checkpoint: Checkpoint{Location: "/data/checkpoints/watched", StaleAfter: 10 * time.Minute},
			probe: Probe{Schedule: "@every 5m", Write: true, SlowAfter: 2 * time.Second, OpenIncident: true,
				Path: filepath.Join("/data/checkpoints/watched", "_streamwatch_probe")},
		},
		{
			name:       "quiet",
			channel:    "C0QUIET",
			kafka:      PipelineKafka{StallAfter: 5 * time.Minute, AllowedLag: 1},
			checkpoint: Checkpoint{Location: "s3://bucket/cp/", StaleAfter: 10 * time.Minute},
			probe:      Probe{SlowAfter: 2 * time.Second, Path: "s3://bucket/cp/_streamwatch_probe"},
		},
	}
	for _, tt := range tests {
		p, ok := cfg.Pipeline(tt.name)
		if !ok {
			t.Fatalf("pipeline %s missing", tt.name)
		}
		if p.Channel != tt.channel {
			t.Errorf("%s: channel = %q, want %q", tt.name, p.Channel, tt.channel)
		}
		if !reflect.DeepEqual(p.Kafka, tt.kafka) {
			t.Errorf("%s: kafka = %+v, want %+v", tt.name, p.Kafka, tt.kafka)
		}
		if !reflect.DeepEqual(p.Checkpoint, tt.checkpoint) {
			t.Errorf("%s: checkpoint = %+v, want %+v", tt.name, p.Checkpoint, tt.checkpoint)
		}
		if p.Probe != tt.probe {
			t.Errorf("%s: probe = %+v, want %+v", tt.name, p.Probe, tt.probe)
		}
		if p.Logs.MaxBytes != 8<<20 {
			t.Errorf("%s: logs.max_bytes = %d, want %d", tt.name, p.Logs.MaxBytes, 8<<20)
		}
	}
	if p, _ := cfg.Pipeline("quiet"); p.Probe.Enabled() {
		t.Errorf("quiet: probe enabled with an empty schedule")
	}
	if p, _ := cfg.Pipeline("plain"); p.Kafka.Enabled() || p.Probe.Enabled() {
		t.Errorf("plain: kafka or probe enabled without a kafka or checkpoint section")
	}
}

// An explicit value replaces a default, including lists, false and zero where they are allowed.
func TestExplicitValuesReplaceDefaults(t *testing.T) {
	cfg, err := Parse([]byte(`
http: {listen: ":0", allow_unauthenticated_webhooks: true}
slack: {default_channel: C0ALERTS, command: /sw, thread_coalesce: 0s}
alerts: {group_by: [fingerprint], auto_resolve_after: 2h}
storage: {s3: {path_style: false, endpoint: "http://127.0.0.1:9000", region: eu-west-1}}
health: {digest_schedule: "CRON_TZ=Europe/Berlin 0 9 * * 1-5"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Listen != ":0" || !cfg.HTTP.AllowUnauthenticatedWebhooks {
		t.Errorf("http = %+v", cfg.HTTP)
	}
	if cfg.Slack.Command != "/sw" || cfg.Slack.ThreadCoalesce != 0 {
		t.Errorf("slack = %+v", cfg.Slack)
	}
	if !reflect.DeepEqual(cfg.Alerts.GroupBy, []string{"fingerprint"}) || cfg.Alerts.AutoResolveAfter != 2*time.Hour {
		t.Errorf("alerts = %+v", cfg.Alerts)
	}
	if cfg.Storage.S3 != (S3{Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1"}) {
		t.Errorf("storage.s3 = %+v", cfg.Storage.S3)
	}
}

func TestYAMLFeatures(t *testing.T) {
	cfg, err := Parse([]byte(`
slack: {default_channel: C0ALERTS}
kafka:
  clusters:
    main: &cluster {brokers: ["k1:9092"], timeout: 10s}
    backup:
      <<: *cluster
      brokers: ["k2:9092"]
pipelines:
  - &base
    name: one
    kafka: {cluster: main, group: g}
    logs: {max_bytes: 0x1000}
  - <<: *base
    name: two
`))
	if err != nil {
		t.Fatal(err)
	}
	backup := cfg.Kafka.Clusters["backup"]
	if !reflect.DeepEqual(backup.Brokers, []string{"k2:9092"}) || backup.Timeout != 10*time.Second {
		t.Errorf("merged cluster = %+v", backup)
	}
	two, _ := cfg.Pipeline("two")
	if two == nil || two.Kafka.Group != "g" || two.Logs.MaxBytes != 4096 {
		t.Errorf("merged pipeline = %+v", two)
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want an error wrapping os.ErrNotExist", err)
	}

	_, err = Load("testdata/many-errors.yaml")
	var errs Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		t.Fatalf("Load(many-errors) = %v, want Errors", err)
	}
	if !strings.HasPrefix(err.Error(), "config testdata/many-errors.yaml:\n") {
		t.Errorf("Load error does not name the file first:\n%v", err)
	}
	var fe FieldError
	if !errors.As(err, &fe) || fe.Path == "" {
		t.Errorf("errors.As(FieldError) = %+v", fe)
	}
}

func TestExampleConfig(t *testing.T) {
	cfg := load(t, "../deploy/config.example.yaml")
	if len(cfg.Pipelines) == 0 || len(cfg.Alerts.Routes) == 0 || len(cfg.Kafka.Clusters) == 0 {
		t.Errorf("example config lacks pipelines, routes or clusters: %+v", cfg)
	}
}

// TestLine: a documented fact is named with the file and line it is written on, so a reply
// can point at it; a key that is not written (a default), or a configuration not loaded from
// a file, has none.
func TestLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "streamwatch.yaml")
	data := "slack: {default_channel: C0}\nkafka:\n  clusters:\n    main: {brokers: [\"b:9092\"]}\npipelines:\n  - name: p\n    kafka:\n      topics: [t]\n      group: g\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"pipelines[0].kafka.topics":        path + ":8",
		"kafka.clusters.main.brokers":      path + ":4",
		"pipelines[0].checkpoint.location": "",
	} {
		if got := cfg.Line(key); got != want {
			t.Errorf("Line(%s) = %q, want %q", key, got, want)
		}
	}
	parsed, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := parsed.Line("pipelines[0].kafka.topics"); got != "" {
		t.Errorf("Line without a file = %q", got)
	}
}
