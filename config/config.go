// Package config is streamwatch's configuration contract: the YAML file (decoded strictly, with
// defaults, and validated with errors that name YAML paths) and the secrets that come only from
// the environment.
//
// docs/config.md documents every key; deploy/config.example.yaml shows every key.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is a decoded, defaulted and validated configuration file. The `default` struct tags
// are the defaults applied to keys the file leaves out; docs/config.md lists them too.
type Config struct {
	HTTP      HTTP       `yaml:"http"`
	Slack     Slack      `yaml:"slack"`
	Redis     Redis      `yaml:"redis"`
	Alerts    Alerts     `yaml:"alerts"`
	Kafka     Kafka      `yaml:"kafka"`
	Storage   Storage    `yaml:"storage"`
	Charts    Charts     `yaml:"charts"`
	Pipelines []Pipeline `yaml:"pipelines"`
	Health    Health     `yaml:"health"`
	Diagnose  Diagnose   `yaml:"diagnose"`
	Repair    Repair     `yaml:"repair"`

	// file is the path Load read; lines maps each YAML path present to its line (Line).
	file  string         `yaml:"-"`
	lines map[string]int `yaml:"-"`
}

// Line says where the key at a YAML path (pipelines[0].kafka.topics) is written in the file
// Load read: "/etc/streamwatch.yaml:14"; "" when it is not written there (a default) or the
// configuration was not loaded from a file.
func (c *Config) Line(path string) string {
	line, ok := c.lines[path]
	if !ok || c.file == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", c.file, line)
}

// HTTP is the server for alert webhooks, /healthz, /readyz and /metrics.
type HTTP struct {
	Listen string `yaml:"listen" default:"127.0.0.1:8080"`
	// MetricsListen, when set, serves /metrics, /healthz and /readyz on this address instead of
	// Listen, so the address alert senders reach does not expose them.
	MetricsListen string `yaml:"metrics_listen"`
	// MetricsPartitions adds per-partition series (topic and partition labels) to the
	// pipelines' progress metrics; off, their labels are bounded by the pipelines.
	MetricsPartitions bool  `yaml:"metrics_partitions" default:"false"`
	MaxBodyBytes      int64 `yaml:"max_body_bytes" default:"1048576"`
	// AllowUnauthenticatedWebhooks accepts webhooks without STREAMWATCH_WEBHOOK_TOKEN.
	AllowUnauthenticatedWebhooks bool `yaml:"allow_unauthenticated_webhooks" default:"false"`
}

// Slack is where and how the bot talks.
type Slack struct {
	Command string `yaml:"command" default:"/streamwatch"`
	// DefaultChannel receives incidents of alerts that match no pipeline, and is the channel of
	// every pipeline that names none.
	DefaultChannel string `yaml:"default_channel"`
	// HealthChannel receives scheduled digests; Parse fills it with DefaultChannel when unset.
	HealthChannel string `yaml:"health_channel"`
	// ThreadCoalesce bounds updates to one thread reply and one root update per incident per
	// window; 0 posts every update at once.
	ThreadCoalesce time.Duration `yaml:"thread_coalesce" default:"10s"`
	// AllowedChannels are the channel IDs commands are answered in; empty means every channel.
	AllowedChannels []string `yaml:"allowed_channels"`
	// Remediators are user IDs (U…, W…) or user-group IDs (S…) allowed to remediate every
	// pipeline (and to resolve and merge incidents).
	Remediators []string `yaml:"remediators"`
	// TimeZone is the IANA time zone of every time a person reads in Slack (replies, roots,
	// notices, postmortems).
	TimeZone string `yaml:"time_zone" default:"UTC"`
	// Escalation calls people into incidents nobody acknowledges.
	Escalation Escalation `yaml:"escalation"`
}

// Location is the time zone people read times in (UTC when the name does not load; Parse
// refuses that).
func (s Slack) Location() *time.Location {
	if loc, err := time.LoadLocation(s.TimeZone); err == nil {
		return loc
	}
	return time.UTC
}

// Escalation: an incident of one of Severities still unacknowledged After it opened gets one
// thread reply mentioning Mention, and its root says it was escalated. It is off when After is
// 0 or Mention is empty.
type Escalation struct {
	After time.Duration `yaml:"after" default:"15m"`
	// Mention are user IDs (U…, W…) or user-group IDs (S…).
	Mention []string `yaml:"mention"`
	// Severities are SEV1 … SEV5.
	Severities []string `yaml:"severities" default:"SEV1,SEV2"`
	// Levels are further levels after the first (After, Mention): each fires once its After
	// has passed unacknowledged, in order; the highest fired repeats every Repeat (0: once).
	Levels []EscalationLevel `yaml:"levels"`
	// AckTimeout, when positive, escalates again an incident acknowledged but neither resolved
	// nor touched by a person for this long.
	AckTimeout time.Duration `yaml:"ack_timeout" default:"0s"`
	// Webhook also sends each escalation (and the resolution of an escalated incident) outside
	// Slack.
	Webhook EscalationWebhook `yaml:"webhook"`
}

// EscalationLevel is one further level of slack.escalation.
type EscalationLevel struct {
	After   time.Duration `yaml:"after"`
	Mention []string      `yaml:"mention"`
	Repeat  time.Duration `yaml:"repeat"`
}

// EscalationWebhook is an outgoing webhook for escalations: URLEnv names the environment
// variable holding its URL (a secret: for PagerDuty it carries the routing key), Format its
// body. Off when URLEnv is empty.
type EscalationWebhook struct {
	URLEnv string `yaml:"url_env"`
	// Format is pagerduty_events_v2, the only one so far.
	Format string `yaml:"format" default:"pagerduty_events_v2"`
}

// FormatPagerDuty is PagerDuty's Events API v2.
const FormatPagerDuty = "pagerduty_events_v2"

// Enabled reports whether escalation is on.
func (e Escalation) Enabled() bool { return e.After > 0 && len(e.Mention) > 0 && len(e.Severities) > 0 }

// SeverityLevels are the severities as numbers, 1 (SEV1) … 5; unknown ones are left out
// (Parse refuses them).
func (e Escalation) SeverityLevels() []int {
	var out []int
	for _, s := range e.Severities {
		if n, ok := sevLevel(s); ok {
			out = append(out, n)
		}
	}
	return out
}

// sevLevel reads SEV1 … SEV5, in any case.
func sevLevel(s string) (int, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if len(s) == 4 && strings.HasPrefix(s, "SEV") && s[3] >= '1' && s[3] <= '5' {
		return int(s[3] - '0'), true
	}
	return 0, false
}

// Redis holds the non-secret Redis settings; the address is REDIS_URL.
type Redis struct {
	KeyPrefix string `yaml:"key_prefix" default:"streamwatch"`
	// MinReplicasAcked, when at least 1, makes a webhook answer 2xx only after Redis's WAIT
	// confirms that this many replicas have the batch's writes (and the outbox, commands and
	// locks wait for them too); 0 acknowledges what the primary alone has.
	MinReplicasAcked int64 `yaml:"min_replicas_acked" default:"0"`
	// ReplicaAckTimeout is how long WAIT waits for those replicas; past it a webhook answers
	// 503, so that the sender retries.
	ReplicaAckTimeout time.Duration `yaml:"replica_ack_timeout" default:"1s"`
}

// Alerts is alert intake: deduplication, auto-resolution and routing to pipelines.
type Alerts struct {
	// GroupBy are the labels that make an alert's dedup key (a generic webhook's dedup_key wins).
	GroupBy []string `yaml:"group_by" default:"alertname,pipeline"`
	// AutoResolveAfter resolves an incident this long after every one of its alerts resolved
	// (unless one fires again meanwhile); 0 leaves resolving to a person.
	AutoResolveAfter time.Duration `yaml:"auto_resolve_after" default:"0s"`
	// CorrelatePipeline joins an alert of a pipeline to the open incident streamwatch opened
	// for that pipeline (detection, probe), and streamwatch's own symptom to the pipeline's
	// open incident, instead of opening a second one.
	CorrelatePipeline bool `yaml:"correlate_pipeline" default:"true"`
	// IncidentRetention is how long a closed (resolved or merged) incident, its timeline and its
	// keys stay in Redis; the audit stream keeps entries twice as long.
	IncidentRetention time.Duration `yaml:"incident_retention" default:"2160h"`
	// Flood folds a storm of distinct alerts into one flood incident per channel.
	Flood Flood `yaml:"flood"`
	// Heartbeats are alerts expected at least every so often (a dead man's switch, such as
	// Alertmanager's always-firing Watchdog): they never open an incident; their absence does.
	Heartbeats []Heartbeat `yaml:"heartbeats"`
	// Routes are tried in order and the first match wins; an alert's own `pipeline` label also
	// routes it.
	Routes []Route `yaml:"routes"`
}

// Flood is flood protection: when more than NewIncidentsPerMinute new incidents would open in
// one channel within a minute, further new alerts of that channel join one flood incident,
// until the rate has stayed at or below the limit for QuietFor.
type Flood struct {
	// NewIncidentsPerMinute is the limit per channel; 0 turns flood protection off.
	NewIncidentsPerMinute int64 `yaml:"new_incidents_per_minute" default:"20"`
	// ExemptSeverity: an alert this severe or worse (SEV1 … SEV5) never folds into a flood; it
	// opens or joins its own incident and escalates as usual.
	ExemptSeverity Severity      `yaml:"exempt_severity" default:"SEV1"`
	QuietFor       time.Duration `yaml:"quiet_for" default:"5m"`
}

// Severity is a severity as the configuration writes it, SEV1 (critical) to SEV5 (info).
type Severity string

// Level is the severity's number, 1 for SEV1; 0 when it is none of SEV1 to SEV5 (validation
// rejects those).
func (s Severity) Level() int {
	n, _ := sevLevel(string(s))
	return n
}

// Heartbeat is an alert expected at least Every: one whose labels equal every entry of Match
// is a beat. No beat for Every and a grace of half of it opens an incident in Channel, which
// resolves when a beat arrives again.
type Heartbeat struct {
	Match   map[string]string `yaml:"match"`
	Every   time.Duration     `yaml:"every"`
	Channel string            `yaml:"channel"`
}

// Route sends alerts whose labels match to a pipeline. Every entry of Match and of MatchRE
// must hold.
type Route struct {
	// Match maps a label name to the exact value it must have.
	Match map[string]string `yaml:"match"`
	// MatchRE maps a label name to a regular expression its whole value must match; the
	// expressions are compiled anchored, as ^(?:re)$.
	MatchRE map[string]*regexp.Regexp `yaml:"match_re"`
	// Pipeline is the name of a pipeline in Config.Pipelines.
	Pipeline string `yaml:"pipeline"`
}

// Kafka is the Kafka clusters pipelines read from.
type Kafka struct {
	// SampleInterval is how often pipelines' consumer lag is sampled in the background.
	SampleInterval time.Duration           `yaml:"sample_interval" default:"30s"`
	Clusters       map[string]KafkaCluster `yaml:"clusters"`
}

// KafkaCluster is how to reach one Kafka cluster.
type KafkaCluster struct {
	Brokers []string `yaml:"brokers"`
	// Version is the Kafka protocol version the client speaks, as sarama parses it.
	Version  string        `yaml:"version" default:"2.8.0"`
	ClientID string        `yaml:"client_id" default:"streamwatch"`
	Timeout  time.Duration `yaml:"timeout" default:"5s"`
	TLS      TLS           `yaml:"tls"`
	SASL     SASL          `yaml:"sasl"`
}

// TLS configures TLS to Kafka brokers. CertFile and KeyFile are set together or not at all.
type TLS struct {
	Enabled  bool   `yaml:"enabled" default:"false"`
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// SASL configures SASL authentication to Kafka brokers. The password comes from the
// environment variable PasswordEnv names.
type SASL struct {
	// Mechanism is "" (no SASL), PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	Mechanism   string `yaml:"mechanism"`
	Username    string `yaml:"username"`
	PasswordEnv string `yaml:"password_env"`
}

// Storage configures access to checkpoint storage.
type Storage struct {
	S3    S3    `yaml:"s3"`
	GCS   GCS   `yaml:"gcs"`
	Azure Azure `yaml:"azure"`
}

// Azure configures abfss://, abfs://, wasbs:// and wasb:// locations; credentials are
// AZURE_STORAGE_CONNECTION_STRING, else azidentity's default chain (AZURE_CLIENT_ID and the
// other AZURE_* variables, workload identity, managed identity, the Azure CLI).
type Azure struct {
	// Endpoint is the Blob service URL; empty means the connection string's BlobEndpoint, then
	// https://<account>.blob.core.windows.net (the abfss:// dfs host mapped to blob).
	Endpoint string `yaml:"endpoint"`
}

// GCS configures gs:// locations; credentials are Google's usual ones
// (GOOGLE_APPLICATION_CREDENTIALS, workload identity, the metadata server).
type GCS struct {
	// Endpoint is a GCS-compatible JSON API URL; empty means STORAGE_EMULATOR_HOST, then Google.
	Endpoint string `yaml:"endpoint"`
}

// S3 configures s3:// locations; credentials are the usual AWS_* environment variables.
type S3 struct {
	// Endpoint is an S3-compatible endpoint URL; empty means AWS.
	Endpoint  string `yaml:"endpoint"`
	Region    string `yaml:"region" default:"us-east-1"`
	PathStyle bool   `yaml:"path_style" default:"true"`
}

// Charts are the progress charts (PNG) streamwatch posts in incident threads and on request
// (`chart`), drawn from the progress samples it keeps of every pipeline it samples.
type Charts struct {
	// Enabled posts charts; off, no samples are kept and `chart` says charts are off.
	Enabled bool `yaml:"enabled" default:"true"`
	// Window is how much progress history each pipeline keeps (and the longest span a chart
	// shows): full resolution for the last hour, one point a minute before it.
	Window time.Duration `yaml:"window" default:"6h"`
	// TimeZone is the IANA time zone of the charts' time axis and of their alt text.
	TimeZone string `yaml:"time_zone" default:"UTC"`
}

// Location is the charts' time zone (UTC when the name does not load; Parse refuses that).
func (c Charts) Location() *time.Location {
	if loc, err := time.LoadLocation(c.TimeZone); err == nil {
		return loc
	}
	return time.UTC
}

// Pipeline is one monitored data pipeline: where its incidents go, and (in later features) its
// Kafka consumer group, Spark checkpoint, storage probe and logs.
type Pipeline struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Channel is where the pipeline's incidents go; Parse fills it with
	// slack.default_channel when unset.
	Channel    string        `yaml:"channel"`
	Kafka      PipelineKafka `yaml:"kafka"`
	Checkpoint Checkpoint    `yaml:"checkpoint"`
	Probe      Probe         `yaml:"probe"`
	Logs       Logs          `yaml:"logs"`
	// DeployedConfig is the path of the deployed job's options, for drift checks; empty: none.
	DeployedConfig string `yaml:"deployed_config"`
	// Detect is detection: incidents from streamwatch's own samples.
	Detect Detect `yaml:"detect"`
	// Remediators are user IDs or user-group IDs allowed to remediate this pipeline, in
	// addition to slack.remediators.
	Remediators []string `yaml:"remediators"`
}

// PipelineKafka is the pipeline's consumer group. Cluster is empty when the pipeline has no
// kafka section.
type PipelineKafka struct {
	// Cluster names an entry of kafka.clusters; it defaults to the only one if there is
	// exactly one.
	Cluster string `yaml:"cluster"`
	// Topics narrows lag to these topics; empty means every topic the group commits to.
	Topics []string `yaml:"topics"`
	Group  string   `yaml:"group"`
	// StallAfter is how long the group may commit nothing while lag grows before it counts as
	// stalled.
	StallAfter time.Duration `yaml:"stall_after" default:"5m"`
	// AllowedLag is how many records a stopped consumer may leave unread and still count as
	// caught up: transaction markers leave a lag of 1 for ever.
	AllowedLag int64 `yaml:"allowed_lag" default:"1"`
	// PublishGroup, when set, receives the checkpoint's processed offsets after every sampling
	// round (a standalone commit), so that lag exporters see Spark's position.
	PublishGroup string `yaml:"publish_group"`
}

// Enabled reports whether the pipeline has a Kafka consumer group to watch.
func (k PipelineKafka) Enabled() bool { return k.Cluster != "" }

// Checkpoint is the pipeline's Spark checkpoint. Location is empty when the pipeline has none.
type Checkpoint struct {
	// Location is a plain path, a file:// URL, an s3://bucket/prefix or a gs://bucket/prefix URL.
	Location string `yaml:"location"`
	// StaleAfter is how long records may wait with no commit before the checkpoint counts as
	// stale. Written "auto", StaleAuto is set and StaleAfter keeps its default until the
	// pipeline's own batch interval is learned (pipeline.StaleAfter).
	StaleAfter time.Duration `yaml:"stale_after" default:"10m"`
	StaleAuto  bool          `yaml:"-"`
	// BackupLocation is where repairs copy the checkpoint first; empty: repairs that need a
	// backup are refused.
	BackupLocation string `yaml:"backup_location"`
	// JobUser is whose access the read-only writability check judges; unset (Set false):
	// streamwatch's own uid and groups.
	JobUser JobUser `yaml:"job_user"`
}

// JobUser is the Spark job's user: a uid and its groups (the first is the primary group) for
// local checkpoints, or, for abfss://, its Microsoft Entra object ID (Principal).
type JobUser struct {
	UID       int64   `yaml:"uid"`
	GIDs      []int64 `yaml:"gids"`
	Principal string  `yaml:"principal"`
	// Set is true when the key is present; Parse fills it.
	Set bool `yaml:"-"`
}

// Probe periodically lists (and optionally writes) the pipeline's storage.
type Probe struct {
	// Schedule is a robfig/cron spec (see ParseSchedule); empty turns the probe off.
	Schedule string `yaml:"schedule" default:"@every 5m"`
	Write    bool   `yaml:"write" default:"true"`
	// Path is probed; Parse fills it with <checkpoint location>/_streamwatch_probe when unset.
	Path         string        `yaml:"path"`
	SlowAfter    time.Duration `yaml:"slow_after" default:"2s"`
	OpenIncident bool          `yaml:"open_incident" default:"true"`
}

// Enabled reports whether the probe runs: it has a schedule and a path.
func (p Probe) Enabled() bool { return p.Schedule != "" && p.Path != "" }

// Detect judges the pipeline on every sampling round (docs/detection.md).
type Detect struct {
	// OpenIncident makes a symptom open (or join) the pipeline's incident; off, it is a notice
	// in the pipeline's channel.
	OpenIncident bool `yaml:"open_incident" default:"true"`
	// Severity is the severity of the incidents detection opens.
	Severity Severity `yaml:"severity" default:"SEV2"`
	// MaxLag is the age the oldest record the checkpoint has not reached may have; 0 turns
	// that check off.
	MaxLag time.Duration `yaml:"max_lag" default:"15m"`
	// HeartbeatAfter is how long the driver log may say nothing of the query (no "made
	// progress", no "idle" line) before it counts as silent; 0 turns that check off.
	HeartbeatAfter time.Duration `yaml:"heartbeat_after" default:"1m"`
	// RetentionWarning is the share of a topic's retention.ms the oldest unread record may
	// use before the channel is warned (90%: an incident); 0% turns it off.
	RetentionWarning Percent `yaml:"retention_warning" default:"50%"`
}

// Percent is a share written as a percentage, "50%".
type Percent string

// Fraction is the share, 0.5 for "50%"; 0 for anything that is not a percentage from 0% to
// 100% (validation rejects those).
func (p Percent) Fraction() float64 {
	n, ok := strings.CutSuffix(strings.TrimSpace(string(p)), "%")
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
	if err != nil || f < 0 || f > 100 {
		return 0
	}
	return f / 100
}

// Logs are the pipeline's driver logs, searched by diagnose.
type Logs struct {
	// Paths are filepath.Glob patterns.
	Paths []string `yaml:"paths"`
	// MaxBytes is how much of the end of each log is read.
	MaxBytes int64 `yaml:"max_bytes" default:"8388608"`
}

// Health is the scheduled health digest.
type Health struct {
	// DigestSchedule is a robfig/cron spec (see ParseSchedule); empty turns the digest off.
	DigestSchedule string `yaml:"digest_schedule"`
}

// Diagnose bounds the diagnose command.
type Diagnose struct {
	Timeout time.Duration `yaml:"timeout" default:"15s"`
}

// Repair bounds repairs.
type Repair struct {
	// BackupMaxAge is how old a checkpoint backup may be for a repair to proceed.
	BackupMaxAge time.Duration `yaml:"backup_max_age" default:"1h"`
	// ConfirmWithin is how long a dry run's plan may be confirmed; after that it expires.
	ConfirmWithin time.Duration `yaml:"confirm_within" default:"10m"`
	// QuietFor is how long the checkpoint and the driver logs must have been quiet (no new
	// commit, offsets file or log line) before a repair or restore proceeds without --force.
	QuietFor time.Duration `yaml:"quiet_for" default:"2m"`
}

// Pipeline returns the pipeline with the given name.
func (c *Config) Pipeline(name string) (*Pipeline, bool) {
	for i := range c.Pipelines {
		if c.Pipelines[i].Name == name {
			return &c.Pipelines[i], true
		}
	}
	return nil, false
}

// Load reads and parses the configuration file at path. A configuration that is read but
// invalid yields an error wrapping Errors.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	cfg.file = path
	return cfg, nil
}

// Parse decodes a YAML configuration strictly (unknown keys and wrong types are errors),
// applies defaults and validates it. Every problem found is reported at once as Errors, each
// naming its YAML path.
func Parse(data []byte) (*Config, error) {
	root, err := parseYAML(data)
	if err != nil {
		return nil, Errors{{Msg: err.Error()}}
	}
	d := newDecoder()
	cfg := &Config{}
	applyDefaults(reflectValue(cfg))
	if root != nil {
		d.value(root, reflectValue(cfg), "")
	}
	fillDerived(cfg, d.lines)
	for i := range cfg.Pipelines {
		cfg.Pipelines[i].Checkpoint.StaleAuto = d.auto[fmt.Sprintf("pipelines[%d].checkpoint.stale_after", i)]
	}
	v := &validator{lines: d.lines, decodeErrs: d.errs}
	v.config(cfg)
	if errs := append(d.errs, v.errs...); len(errs) > 0 {
		// File order is the order a person fixes them in; problems without a line go last.
		slices.SortStableFunc(errs, func(a, b FieldError) int {
			return cmp.Compare(sortLine(a.Line), sortLine(b.Line))
		})
		return nil, errs
	}
	cfg.lines = d.lines
	return cfg, nil
}

func sortLine(line int) int {
	if line == 0 {
		return math.MaxInt
	}
	return line
}

// parseYAML returns the single document's root node, or nil for an empty document.
func parseYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, fmt.Errorf("invalid YAML: %w", err)
		}
		return nil, fmt.Errorf("invalid YAML: more than one document (line %d)", extra.Line)
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}
