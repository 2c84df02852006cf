package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// parseErrors parses doc and returns the Errors it must yield.
func parseErrors(t *testing.T, doc string) Errors {
	t.Helper()
	cfg, err := Parse([]byte(doc))
	if err == nil {
		t.Fatalf("Parse succeeded, want errors; config: %+v", cfg)
	}
	if cfg != nil {
		t.Errorf("Parse returned a config with errors")
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse error is %T, want Errors: %v", err, err)
	}
	return errs
}

// head is prepended to the documents below that do not start with their own slack section, so
// each case shows only what it is about.
const head = "slack: {default_channel: C0ALERTS}\n"

// kafkaHead is one Kafka cluster, for the pipelines of a case to name.
const kafkaHead = "kafka: {clusters: {main: {brokers: ['k:9092']}}}\n"

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		path string
		msg  string
	}{
		// Required values and fallbacks.
		{"channel without default", "pipelines:\n  - {name: a, channel: C0A}\n  - {name: b}\n",
			"pipelines[1].channel", "required (no slack.default_channel)"},
		{"nothing to post to", "http: {listen: ':8080'}\n",
			"slack.default_channel", "required when no pipelines are configured"},
		{"pipeline name required", head + "pipelines: [{channel: C0A}]\n",
			"pipelines[0].name", "required"},
		{"pipeline name pattern", head + "pipelines: [{name: SMS Replies}]\n",
			"pipelines[0].name", `invalid name "SMS Replies" (want lower-case letters, digits, '.', '_' or '-', starting with a letter or digit)`},
		{"pipeline name unique", head + "pipelines: [{name: a}, {name: b}, {name: a}]\n",
			"pipelines[2].name", `duplicate pipeline name "a" (also pipelines[0])`},

		// Wrong types.
		{"list expected", "slack: {default_channel: C0ALERTS, allowed_channels: C0OPS}\n",
			"slack.allowed_channels", "expected a list of strings"},
		{"string element expected", "slack: {default_channel: C0ALERTS, remediators: [[U0A]]}\n",
			"slack.remediators[0]", "expected a string, got a list"},
		{"null element", head + "alerts: {group_by: [alertname, ~]}\n",
			"alerts.group_by[1]", "expected a string, got null"},
		{"integer expected", head + "http: {max_body_bytes: 1MB}\n",
			"http.max_body_bytes", `expected an integer, got "1MB"`},
		{"bool expected", head + "http: {allow_unauthenticated_webhooks: \"yes\"}\n",
			"http.allow_unauthenticated_webhooks", `expected true or false, got "yes"`},
		{"mapping expected", head + "http: [listen]\n",
			"http", "expected a mapping, got a list"},
		{"list of pipelines expected", head + "pipelines: sms\n",
			"pipelines", "expected a list"},
		{"mapping of strings expected", head + "pipelines: [{name: p}]\nalerts: {routes: [{match: [a], pipeline: p}]}\n",
			"alerts.routes[0].match", "expected a mapping of strings"},
		{"string expected", head + "redis: {key_prefix: {a: b}}\n",
			"redis.key_prefix", "expected a string, got a mapping"},
		{"duplicate key", head + "http:\n  listen: ':1'\n  listen: ':2'\n",
			"http.listen", "duplicate key (first at line 3)"},

		// Durations.
		{"invalid duration", head + "kafka: {clusters: {main: {brokers: ['k:9092'], timeout: 5x}}}\n",
			"kafka.clusters.main.timeout", `invalid duration "5x" (want a Go duration such as "10s" or "5m")`},
		{"duration without unit", head + "diagnose: {timeout: 15}\n",
			"diagnose.timeout", `invalid duration "15" (want a Go duration such as "10s" or "5m")`},
		{"zero duration", head + "diagnose: {timeout: 0s}\n",
			"diagnose.timeout", "must be greater than 0, got 0s"},
		{"zero sample interval", head + "kafka: {sample_interval: 0s}\n",
			"kafka.sample_interval", "must be greater than 0, got 0s"},

		// Charts.
		{"charts window too short", head + "charts: {window: 30s}\n",
			"charts.window", "must be at least 1m, got 30s"},
		{"charts window too long", head + "charts: {window: 200h}\n",
			"charts.window", "must be at most 168h0m0s (a point a minute of it is kept per pipeline), got 200h0m0s"},
		{"slack time zone unknown", "slack: {default_channel: C0ALERTS, time_zone: Mars/Olympus}\n",
			"slack.time_zone", `unknown time zone "Mars/Olympus" (want an IANA name such as UTC or Europe/Paris)`},
		{"escalation webhook format", "slack: {default_channel: C0ALERTS, escalation: {webhook: {url_env: PD_URL, format: opsgenie}}}\n",
			"slack.escalation.webhook.format", `unknown format "opsgenie" (want pagerduty_events_v2)`},
		{"escalation webhook env name", "slack: {default_channel: C0ALERTS, escalation: {webhook: {url_env: 'PD URL'}}}\n",
			"slack.escalation.webhook.url_env", `invalid environment variable name "PD URL" (want letters, digits and _, such as PAGERDUTY_EVENTS_URL)`},
		{"charts time zone unknown", head + "charts: {time_zone: Mars/Olympus}\n",
			"charts.time_zone", `unknown time zone "Mars/Olympus" (want an IANA name such as UTC or Europe/Paris)`},

		// Detection and publish_group (issue 16).
		{"negative max_lag", head + "pipelines: [{name: p, detect: {max_lag: -1m}}]\n",
			"pipelines[0].detect.max_lag", "must not be negative, got -1m0s"},
		{"publish_group without kafka", head + "pipelines: [{name: p, kafka: {group: g, publish_group: g2}}]\n",
			"pipelines[0].kafka.cluster", "required (no kafka.clusters are configured)"},
		{"publish_group is the documented group", head + kafkaHead + "pipelines: [{name: p, kafka: {group: sms-prod, publish_group: sms-prod}}]\n",
			"pipelines[0].kafka.publish_group", `is the documented group "sms-prod": streamwatch never commits to it (name a group of its own, e.g. "sms-prod-spark")`},
		{"publish_group is another pipeline's group", head + kafkaHead + "pipelines:\n  - {name: a, kafka: {group: a-prod}}\n  - {name: b, kafka: {group: b-prod, publish_group: a-prod}}\n",
			"pipelines[1].kafka.publish_group", `is the documented group of pipeline "a": streamwatch never commits to it`},
		{"publish_group twice", head + kafkaHead + "pipelines:\n  - {name: a, kafka: {group: a-prod, publish_group: spark}}\n  - {name: b, kafka: {group: b-prod, publish_group: spark}}\n",
			"pipelines[1].kafka.publish_group", `is also the publish_group of pipeline "a" on cluster main`},
		{"publish_group with spaces", head + kafkaHead + "pipelines: [{name: p, kafka: {group: g, publish_group: ' spark'}}]\n",
			"pipelines[0].kafka.publish_group", `must not begin or end with spaces, got " spark"`},
		{"negative duration", "slack: {default_channel: C0ALERTS, thread_coalesce: -1s}\n",
			"slack.thread_coalesce", "must not be negative, got -1s"},
		{"zero stall_after", head + "pipelines: [{name: p, kafka: {stall_after: 0s}}]\n",
			"pipelines[0].kafka.stall_after", "must be greater than 0, got 0s"},
		{"negative allowed_lag", head + "pipelines: [{name: p, kafka: {allowed_lag: -1}}]\n",
			"pipelines[0].kafka.allowed_lag", "must be 0 or more, got -1"},
		{"allowed_lag not a number", head + "pipelines: [{name: p, kafka: {allowed_lag: one}}]\n",
			"pipelines[0].kafka.allowed_lag", `expected an integer, got "one"`},
		{"zero backup_max_age", head + "repair: {backup_max_age: 0s}\n",
			"repair.backup_max_age", "must be greater than 0, got 0s"},
		{"zero confirm_within", head + "repair: {confirm_within: 0s}\n",
			"repair.confirm_within", "must be greater than 0, got 0s"},
		{"negative quiet_for", head + "repair: {quiet_for: -1m}\n",
			"repair.quiet_for", "must not be negative, got -1m0s"},

		// HTTP and Slack.
		{"max_body_bytes", head + "http: {max_body_bytes: 0}\n",
			"http.max_body_bytes", "must be greater than 0"},
		{"listen address", head + "http: {listen: localhost}\n",
			"http.listen", `invalid address "localhost": want host:port: address localhost: missing port in address`},
		{"metrics address", head + "http: {metrics_listen: ':x'}\n",
			"http.metrics_listen", `invalid address ":x": invalid port "x"`},
		{"metrics on the webhook address", head + "http: {listen: '0.0.0.0:8080', metrics_listen: '0.0.0.0:8080'}\n",
			"http.metrics_listen", "is http.listen (0.0.0.0:8080); leave it empty to serve /metrics there"},
		{"pipeline remediator", head + "pipelines: [{name: p, remediators: [S0TEAM, '#team']}]\n",
			"pipelines[0].remediators[1]", `invalid user or user-group ID "#team" (want U…, W… or S…, such as U0123ABCD)`},
		{"slash command", "slack: {default_channel: C0ALERTS, command: streamwatch}\n",
			"slack.command", `invalid slash command "streamwatch" (want one word starting with /, such as /streamwatch)`},
		{"channel name, not ID", "slack: {default_channel: '#alerts'}\n",
			"slack.default_channel", `invalid channel ID "#alerts" (want an ID such as C0123ABCD, not a channel name)`},
		{"allowed channel", "slack: {default_channel: C0ALERTS, allowed_channels: [C0OK, ops]}\n",
			"slack.allowed_channels[1]", `invalid channel ID "ops" (want an ID such as C0123ABCD, not a channel name)`},
		{"remediator", "slack: {default_channel: C0ALERTS, remediators: [U0ADMIN, W0ENT, S0GROUP, bob]}\n",
			"slack.remediators[3]", `invalid user or user-group ID "bob" (want U…, W… or S…, such as U0123ABCD)`},
		{"escalation severity", "slack: {default_channel: C0ALERTS, escalation: {mention: [S0ONCALL], severities: [SEV1, SEV9]}}\n",
			"slack.escalation.severities[1]", `unknown severity "SEV9" (want SEV1, SEV2, SEV3, SEV4 or SEV5)`},
		{"escalation mention", "slack: {default_channel: C0ALERTS, escalation: {mention: [oncall]}}\n",
			"slack.escalation.mention[0]", `invalid user or user-group ID "oncall" (want U…, W… or S…, such as U0123ABCD)`},
		{"escalation after", "slack: {default_channel: C0ALERTS, escalation: {after: -1m}}\n",
			"slack.escalation.after", "must not be negative, got -1m0s"},
		{"escalation of nothing", "slack: {default_channel: C0ALERTS, escalation: {mention: [U0LEAD], severities: []}}\n",
			"slack.escalation.severities", "at least one severity, or nothing would escalate (after: 0s turns escalation off)"},
		{"empty key prefix", head + "redis: {key_prefix: ''}\n",
			"redis.key_prefix", "must not be empty"},
		{"negative replicas", head + "redis: {min_replicas_acked: -1}\n",
			"redis.min_replicas_acked", "must be 0 (do not wait for replicas) or more, not -1"},
		{"replicas not a number", head + "redis: {min_replicas_acked: all}\n",
			"redis.min_replicas_acked", `expected an integer, got "all"`},
		{"zero ack timeout", head + "redis: {min_replicas_acked: 1, replica_ack_timeout: 0s}\n",
			"redis.replica_ack_timeout", "must be between 1ms and 1m, not 0s"},
		{"long ack timeout", head + "redis: {replica_ack_timeout: 2m}\n",
			"redis.replica_ack_timeout", "must be between 1ms and 1m, not 2m0s"},

		// Alerts and routes.
		{"empty group_by", head + "alerts: {group_by: []}\n",
			"alerts.group_by", "must name at least one label"},
		{"invalid regexp", head + "pipelines: [{name: p}]\nalerts: {routes: [{match_re: {alertname: '('}, pipeline: p}]}\n",
			"alerts.routes[0].match_re.alertname", "invalid regexp \"(\": error parsing regexp: missing closing ): `(`"},
		{"zero incident_retention", head + "alerts: {incident_retention: 0s}\n",
			"alerts.incident_retention", "must be greater than 0, got 0s"},
		{"negative flood limit", head + "alerts: {flood: {new_incidents_per_minute: -1}}\n",
			"alerts.flood.new_incidents_per_minute", "must not be negative (0 turns flood protection off), got -1"},
		{"flood limit not an integer", head + "alerts: {flood: {new_incidents_per_minute: many}}\n",
			"alerts.flood.new_incidents_per_minute", `expected an integer, got "many"`},
		{"zero flood quiet_for", head + "alerts: {flood: {quiet_for: 0s}}\n",
			"alerts.flood.quiet_for", "must be greater than 0, got 0s"},
		{"route without matchers", head + "pipelines: [{name: p}]\nalerts: {routes: [{match: {a: b}, pipeline: p}, {pipeline: p}]}\n",
			"alerts.routes[1]", "needs match or match_re"},
		{"route without pipeline", head + "alerts: {routes: [{match: {a: b}}]}\n",
			"alerts.routes[0].pipeline", "required"},
		{"route to unknown pipeline", head + "pipelines: [{name: p}]\nalerts: {routes: [{match: {a: b}, pipeline: q}]}\n",
			"alerts.routes[0].pipeline", `unknown pipeline "q"`},
		{"label with dots", head + "pipelines: [{name: p}]\nalerts: {routes: [{match_re: {app.kubernetes.io/name: '('}, pipeline: p}]}\n",
			`alerts.routes[0].match_re["app.kubernetes.io/name"]`, "invalid regexp \"(\": error parsing regexp: missing closing ): `(`"},

		// Kafka.
		{"unknown cluster", head + "kafka: {clusters: {main: {brokers: ['k:9092']}}}\npipelines: [{name: p, kafka: {cluster: other, group: g}}]\n",
			"pipelines[0].kafka.cluster", `unknown cluster "other" (kafka.clusters has: main)`},
		{"no clusters", head + "pipelines: [{name: p, kafka: {group: g}}]\n",
			"pipelines[0].kafka.cluster", "required (no kafka.clusters are configured)"},
		{"ambiguous cluster", head + "kafka: {clusters: {a: {brokers: ['k:1']}, b: {brokers: ['k:2']}}}\npipelines: [{name: p, kafka: {group: g}}]\n",
			"pipelines[0].kafka.cluster", "required (kafka.clusters has 2 clusters: a, b)"},
		{"group required", head + "kafka: {clusters: {main: {brokers: ['k:9092']}}}\npipelines: [{name: p, kafka: {cluster: main}}]\n",
			"pipelines[0].kafka.group", "required"},
		{"brokers required", head + "kafka: {clusters: {main: {}}}\n",
			"kafka.clusters.main.brokers", "required"},
		{"broker address", head + "kafka: {clusters: {main: {brokers: ['k:9092', 'k']}}}\n",
			"kafka.clusters.main.brokers[1]", `invalid broker address "k": want host:port: address k: missing port in address`},
		{"kafka version", head + "kafka: {clusters: {main: {brokers: ['k:9092'], version: '3.6'}}}\n",
			"kafka.clusters.main.version", `invalid version "3.6" (want dotted numbers such as "3.6.0", or "0.11.0.2" before 1.0)`},
		{"sasl mechanism", head + "kafka: {clusters: {main: {brokers: ['k:9092'], sasl: {mechanism: GSSAPI, username: u, password_env: P}}}}\n",
			"kafka.clusters.main.sasl.mechanism", `unknown mechanism "GSSAPI" (want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)`},
		{"sasl username", head + "kafka: {clusters: {main: {brokers: ['k:9092'], sasl: {mechanism: PLAIN, password_env: P}}}}\n",
			"kafka.clusters.main.sasl.username", "required with mechanism PLAIN"},
		{"sasl password_env", head + "kafka: {clusters: {main: {brokers: ['k:9092'], sasl: {mechanism: SCRAM-SHA-512, username: u}}}}\n",
			"kafka.clusters.main.sasl.password_env", "required with mechanism SCRAM-SHA-512"},
		{"sasl password_env name", head + "kafka: {clusters: {main: {brokers: ['k:9092'], sasl: {mechanism: PLAIN, username: u, password_env: 'hunter 2'}}}}\n",
			"kafka.clusters.main.sasl.password_env", `invalid environment variable name "hunter 2"`},
		{"sasl without mechanism", head + "kafka: {clusters: {main: {brokers: ['k:9092'], sasl: {username: u}}}}\n",
			"kafka.clusters.main.sasl.mechanism", "required when username or password_env is set"},
		{"tls cert without key", head + "kafka: {clusters: {main: {brokers: ['k:9092'], tls: {enabled: true, cert_file: /c.pem}}}}\n",
			"kafka.clusters.main.tls", "cert_file and key_file must be set together"},
		{"tls files while disabled", head + "kafka: {clusters: {main: {brokers: ['k:9092'], tls: {ca_file: /ca.pem}}}}\n",
			"kafka.clusters.main.tls.enabled", "must be true when ca_file, cert_file or key_file is set"},

		// Checkpoints, probes, logs, storage.
		{"checkpoint scheme", head + "pipelines: [{name: p, checkpoint: {location: 'hdfs://nn/cp'}}]\n",
			"pipelines[0].checkpoint.location", `invalid location "hdfs://nn/cp": unsupported scheme "hdfs" (want a plain path, file://, s3://, gs://, abfss:// or wasbs://)`},
		{"s3 without bucket", head + "pipelines: [{name: p, checkpoint: {location: 's3:///cp'}}]\n",
			"pipelines[0].checkpoint.location", `invalid location "s3:///cp": an s3:// location needs a bucket, such as s3://bucket/prefix`},
		{"relative file URL", head + "pipelines: [{name: p, checkpoint: {location: 'file://var/cp'}}]\n",
			"pipelines[0].checkpoint.location", `invalid location "file://var/cp": a file:// location needs an absolute path, such as file:///var/lib/spark`},
		{"checkpoint location required", head + "pipelines: [{name: p, checkpoint: {stale_after: 1m}}]\n",
			"pipelines[0].checkpoint.location", "required"},
		{"job_user without uid", head + "pipelines: [{name: p, checkpoint: {location: /cp, job_user: {gids: [185]}}}]\n",
			"pipelines[0].checkpoint.job_user.uid", "required (the uid the Spark job runs as, e.g. 185)"},
		{"job_user negative uid", head + "pipelines: [{name: p, checkpoint: {location: /cp, job_user: {uid: -5}}}]\n",
			"pipelines[0].checkpoint.job_user.uid", "must be a uid between 0 and 4294967294, got -5"},
		{"job_user gid not a number", head + "pipelines: [{name: p, checkpoint: {location: /cp, job_user: {uid: 185, gids: [spark]}}}]\n",
			"pipelines[0].checkpoint.job_user.gids[0]", `expected an integer, got "spark"`},
		{"job_user unknown key", head + "pipelines: [{name: p, checkpoint: {location: /cp, job_user: {user: spark}}}]\n",
			"pipelines[0].checkpoint.job_user.user", `unknown key "user"`},
		{"backup location", head + "pipelines: [{name: p, checkpoint: {location: /cp, backup_location: 'wasbs://c@a.blob.core.windows.net/x'}}]\n",
			"pipelines[0].checkpoint.backup_location", `invalid location "wasbs://c@a.blob.core.windows.net/x": invalid Azure container name "c"`},
		{"abfss without container", head + "pipelines: [{name: p, checkpoint: {location: 'abfss://acct.dfs.core.windows.net/cp'}}]\n",
			"pipelines[0].checkpoint.location", `invalid location "abfss://acct.dfs.core.windows.net/cp": a abfss:// location needs a container and an account, such as abfss://container@account.dfs.core.windows.net/prefix`},
		{"azure account name", head + "pipelines: [{name: p, checkpoint: {location: 'abfss://ckpt@My_Account.dfs.core.windows.net/cp'}}]\n",
			"pipelines[0].checkpoint.location", `invalid location "abfss://ckpt@My_Account.dfs.core.windows.net/cp": invalid Azure storage account name "My_Account"`},
		{"principal on a local checkpoint", head + "pipelines: [{name: p, checkpoint: {location: /cp, job_user: {principal: 7d4b2f0e-3c1a-4e8b-9f6d-2a5c8e1b0d3f}}}]\n",
			"pipelines[0].checkpoint.job_user.principal", "only for an abfss:// or abfs:// location (an object ID is judged against ADLS Gen2 ACLs)"},
		{"principal not an object id", head + "pipelines: [{name: p, checkpoint: {location: 'abfss://ckpt@acct.dfs.core.windows.net/cp', job_user: {principal: spark}}}]\n",
			"pipelines[0].checkpoint.job_user.principal", `must be a Microsoft Entra object ID such as 7d4b2f0e-3c1a-4e8b-9f6d-2a5c8e1b0d3f, got "spark"`},
		{"principal and uid", head + "pipelines: [{name: p, checkpoint: {location: 'abfss://ckpt@acct.dfs.core.windows.net/cp', job_user: {uid: 185, principal: 7d4b2f0e-3c1a-4e8b-9f6d-2a5c8e1b0d3f}}}]\n",
			"pipelines[0].checkpoint.job_user", "either uid and gids (a local checkpoint) or principal (abfss://), not both"},
		{"azure endpoint", head + "storage: {azure: {endpoint: 'acct.blob.core.windows.net'}}\n",
			"storage.azure.endpoint", `invalid endpoint "acct.blob.core.windows.net" (want an http:// or https:// URL, such as https://account.blob.core.windows.net)`},
		{"gs bucket name", head + "pipelines: [{name: p, checkpoint: {location: /cp, backup_location: 'gs://b/x'}}]\n",
			"pipelines[0].checkpoint.backup_location", `invalid location "gs://b/x": invalid GCS bucket name "b"`},
		{"gs without bucket", head + "pipelines: [{name: p, checkpoint: {location: 'gs:///cp'}}]\n",
			"pipelines[0].checkpoint.location", `invalid location "gs:///cp": a gs:// location needs a bucket, such as gs://bucket/prefix`},
		{"probe schedule", head + "pipelines: [{name: p, checkpoint: {location: /cp}, probe: {schedule: 'every 5m'}}]\n",
			"pipelines[0].probe.schedule", `invalid schedule "every 5m" for pipeline "p": expected 5 to 6 fields, found 2: [every 5m]`},
		{"probe schedule time zone", head + "pipelines: [{name: p, checkpoint: {location: /cp}, probe: {schedule: 'CRON_TZ=Mars/Olympus 0 * * * *'}}]\n",
			"pipelines[0].probe.schedule", `invalid schedule "CRON_TZ=Mars/Olympus 0 * * * *" for pipeline "p": provided bad location Mars/Olympus: unknown time zone Mars/Olympus`},
		{"probe schedule bare time zone", head + "pipelines: [{name: p, checkpoint: {location: /cp}, probe: {schedule: 'CRON_TZ=UTC'}}]\n",
			"pipelines[0].probe.schedule", `invalid schedule "CRON_TZ=UTC" for pipeline "p": a CRON_TZ= prefix must be followed by a schedule`},
		{"probe schedule never fires", head + "pipelines: [{name: p, checkpoint: {location: /cp}, probe: {schedule: '0 0 30 2 *'}}]\n",
			"pipelines[0].probe.schedule", `invalid schedule "0 0 30 2 *" for pipeline "p": the schedule never fires`},
		{"probe without location", head + "pipelines: [{name: p, probe: {write: false}}]\n",
			"pipelines[0].probe.path", "required (no checkpoint.location to probe)"},
		{"probe path", head + "pipelines: [{name: p, probe: {path: 'ftp://x/y'}}]\n",
			"pipelines[0].probe.path", `invalid location "ftp://x/y": unsupported scheme "ftp" (want a plain path, file://, s3://, gs://, abfss:// or wasbs://)`},
		{"probe slow_after", head + "pipelines: [{name: p, probe: {path: /x, slow_after: 0s}}]\n",
			"pipelines[0].probe.slow_after", "must be greater than 0, got 0s"},
		{"log object store", head + "pipelines: [{name: p, logs: {paths: ['hdfs://nn/logs/driver*']}}]\n",
			"pipelines[0].logs.paths[0]", `invalid log location "hdfs://nn/logs/driver*": unsupported scheme "hdfs" (want a plain path, file://, s3://, gs://, abfss:// or wasbs://)`},
		{"log glob", head + "pipelines: [{name: p, logs: {paths: ['/var/log/[a']}}]\n",
			"pipelines[0].logs.paths[0]", `invalid glob pattern "/var/log/[a"`},
		{"log max_bytes", head + "pipelines: [{name: p, logs: {max_bytes: -1}}]\n",
			"pipelines[0].logs.max_bytes", "must be greater than 0"},
		{"s3 endpoint", head + "storage: {s3: {endpoint: 'minio:9000'}}\n",
			"storage.s3.endpoint", `invalid endpoint "minio:9000" (want an http:// or https:// URL)`},
		{"gcs endpoint", head + "storage: {gcs: {endpoint: 'gcs:4443'}}\n",
			"storage.gcs.endpoint", `invalid endpoint "gcs:4443" (want an http:// or https:// URL)`},
		{"s3 region", head + "storage: {s3: {region: ''}}\n",
			"storage.s3.region", "must not be empty"},

		// Health.
		{"digest schedule", head + "health: {digest_schedule: '0 25 * * *'}\n",
			"health.digest_schedule", `invalid schedule "0 25 * * *": end of range (25) above maximum (23): 25`},
		{"digest without channel", "pipelines: [{name: p, channel: C0P}]\nhealth: {digest_schedule: '@daily'}\n",
			"slack.health_channel", "required by health.digest_schedule (no slack.default_channel either)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := parseErrors(t, tt.doc)
			if !errs.Has(tt.path, tt.msg) {
				t.Errorf("want %s: %s\ngot:\n%v", tt.path, tt.msg, errs)
			}
		})
	}
}

// TestValidConfigs checks values that look unusual but are fine.
func TestValidConfigs(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"cron with seconds and time zone", head + "health: {digest_schedule: 'CRON_TZ=America/New_York 0 30 9 * * MON-FRI'}\n"},
		{"cron descriptor", head + "health: {digest_schedule: '@weekly'}\n"},
		{"schedule off", head + "pipelines: [{name: p, checkpoint: {location: /cp}, probe: {schedule: ''}}]\n"},
		{"plain relative path", head + "pipelines: [{name: p, checkpoint: {location: data/cp}}]\n"},
		{"s3 location", head + "pipelines: [{name: p, checkpoint: {location: 's3://my-bucket'}}]\n"},
		{"sasl", head + "kafka: {clusters: {main: {brokers: ['[::1]:9092'], version: 0.11.0.2, sasl: {mechanism: SCRAM-SHA-256, username: u, password_env: KAFKA_PASSWORD}}}}\n"},
		{"tls with client cert", head + "kafka: {clusters: {main: {brokers: ['k:9093'], tls: {enabled: true, cert_file: /c.pem, key_file: /k.pem}}}}\n"},
		{"unquoted version number", head + "kafka: {clusters: {main: {brokers: ['k:9092'], version: 2.8.0}}}\n"},
		{"null sections keep defaults", head + "http:\nredis:\npipelines:\n"},
		{"empty matcher with match_re", head + "pipelines: [{name: p}]\nalerts: {routes: [{match: {}, match_re: {a: '.*'}, pipeline: p}]}\n"},
		{"empty document with comments only", "# nothing yet\n" + head},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.doc)); err != nil {
				t.Errorf("Parse:\n%v", err)
			}
		})
	}
}

func TestSeveralErrorsAtOnce(t *testing.T) {
	data, err := os.ReadFile("testdata/many-errors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	errs := parseErrors(t, string(data))
	// In file order, whether the decoder or the validator found them.
	want := strings.Join([]string{
		`http.lisen: unknown key "lisen" (did you mean "listen"?) (line 2)`,
		`http.max_body_bytes: must be greater than 0 (line 3)`,
		`slack.allowed_channels: expected a list of strings (line 5)`,
		`slack.remediators[1]: invalid user or user-group ID "bob" (want U…, W… or S…, such as U0123ABCD) (line 6)`,
		"alerts.routes[0].match_re.alertname: invalid regexp \"(\": error parsing regexp: missing closing ): `(` (line 9)",
		`alerts.routes[1]: needs match or match_re (line 11)`,
		`alerts.routes[1].pipeline: unknown pipeline "nowhere" (line 11)`,
		`kafka.clusters.main.timeout: invalid duration "5x" (want a Go duration such as "10s" or "5m") (line 16)`,
		`pipelines[1].name: duplicate pipeline name "sms-replies" (also pipelines[0]) (line 21)`,
		`pipelines[1].channel: required (no slack.default_channel) (line 21)`,
		`pipelines[1].kafka.cluster: unknown cluster "other" (kafka.clusters has: main) (line 22)`,
		`pipelines[1].probe.path: required (no checkpoint.location to probe) (line 23)`,
		`pipelines[1].probe.schedule: invalid schedule "every five minutes" for pipeline "sms-replies": expected 5 to 6 fields, found 3: [every five minutes] (line 24)`,
	}, "\n")
	if got := errs.Error(); got != want {
		t.Errorf("errors:\n%s\n\nwant:\n%s", got, want)
	}
}

func TestUnknownKeys(t *testing.T) {
	data, err := os.ReadFile("testdata/unknown-keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	errs := parseErrors(t, string(data))
	want := Errors{
		{Path: "colour", Msg: `unknown key "colour"`, Line: 3},
		{Path: "http.lisen", Msg: `unknown key "lisen" (did you mean "listen"?)`, Line: 5},
		{Path: "kafka.clusters.main.tls.ca_flie", Msg: `unknown key "ca_flie" (did you mean "ca_file"?)`, Line: 10},
		{Path: "pipelines[0].kafka.topic", Msg: `unknown key "topic" (did you mean "topics"?)`, Line: 13},
		{Path: "pipelines[0].probe.extra", Msg: `unknown key "extra"`, Line: 14},
		{Path: "alerts.routes[0].continue", Msg: `unknown key "continue"`, Line: 19},
	}
	if errs.Error() != want.Error() {
		t.Errorf("errors:\n%v\n\nwant:\n%v", errs, want)
	}
}

func TestInvalidYAML(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"syntax", "http:\n  listen: [\n", "invalid YAML: yaml: line 2: did not find expected node content"},
		{"two documents", head + "---\n" + head, "invalid YAML: more than one document (line 2)"},
		{"not a mapping", "- a\n- b\n", "expected a mapping, got a list (line 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := parseErrors(t, tt.doc)
			if len(errs) < 1 || errs[0].Error() != tt.want {
				t.Errorf("errors:\n%v\nwant first: %s", errs, tt.want)
			}
		})
	}
}

func TestErrorsFormat(t *testing.T) {
	errs := Errors{
		{Path: "pipelines[1].channel", Msg: "required", Line: 42},
		{Path: "http.listen", Msg: "bad"},
		{Msg: "invalid YAML: boom"},
	}
	want := "pipelines[1].channel: required (line 42)\nhttp.listen: bad\ninvalid YAML: boom"
	if got := errs.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestStaleAfterAuto: checkpoint.stale_after takes "auto" (the default stays as the fallback)
// and still refuses other words, naming the key.
func TestStaleAfterAuto(t *testing.T) {
	doc := head + "pipelines:\n  - name: a\n    checkpoint: {location: /tmp/a, stale_after: auto}\n  - name: b\n    checkpoint: {location: /tmp/b, stale_after: 5m}\n"
	cfg, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cfg.Pipelines[0].Checkpoint, cfg.Pipelines[1].Checkpoint; !a.StaleAuto || a.StaleAfter != 10*60e9 || b.StaleAuto || b.StaleAfter != 5*60e9 {
		t.Fatalf("a %+v, b %+v", a, b)
	}
	errs := parseErrors(t, head+"pipelines:\n  - name: a\n    checkpoint: {location: /tmp/a, stale_after: automatic}\n")
	if !strings.Contains(errs.Error(), "pipelines[0].checkpoint.stale_after") {
		t.Fatalf("errors %v", errs)
	}
}
