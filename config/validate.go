package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	pipelineName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	channelID    = regexp.MustCompile(`^[CDG][A-Z0-9]+$`)
	remediatorID = regexp.MustCompile(`^[UWS][A-Z0-9]+$`)
	slashCommand = regexp.MustCompile(`^/[^\s/]+$`)
	// kafkaVersion is what sarama.ParseKafkaVersion accepts.
	kafkaVersion = regexp.MustCompile(`^(0\.[0-9]+\.[0-9]+\.[0-9]+|[0-9]+\.[0-9]+\.[0-9]+)$`)
	envName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	s3Bucket     = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	gcsBucket    = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$`)
	// Azure container (3-63: lower-case letters, digits, single hyphens) and account names.
	azureContainer = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9]|-[a-z0-9]){2,62}$`)
	azureAccount   = regexp.MustCompile(`^[a-z0-9]{3,24}$`)
	objectID       = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// saslMechanisms are the SASL mechanisms sarama supports without Kerberos or OAuth.
var saslMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// probeDir is the name of the directory a probe writes under a checkpoint location by default.
const probeDir = "_streamwatch_probe"

// fillDerived applies the defaults that depend on other keys.
func fillDerived(c *Config, lines map[string]int) {
	if c.Slack.HealthChannel == "" {
		c.Slack.HealthChannel = c.Slack.DefaultChannel
	}
	var onlyCluster string
	if len(c.Kafka.Clusters) == 1 {
		for name := range c.Kafka.Clusters {
			onlyCluster = name
		}
	}
	for i := range c.Pipelines {
		p := &c.Pipelines[i]
		if p.Channel == "" {
			p.Channel = c.Slack.DefaultChannel
		}
		if _, present := lines[fmt.Sprintf("pipelines[%d].kafka", i)]; present && p.Kafka.Cluster == "" {
			p.Kafka.Cluster = onlyCluster
		}
		if p.Probe.Path == "" && p.Checkpoint.Location != "" {
			p.Probe.Path = joinLocation(p.Checkpoint.Location, probeDir)
		}
		_, p.Checkpoint.JobUser.Set = lines[fmt.Sprintf("pipelines[%d].checkpoint.job_user", i)]
	}
}

// joinLocation appends a path element to a plain path or a file://, s3:// or gs:// URL.
func joinLocation(loc, elem string) string {
	if strings.Contains(loc, "://") {
		return strings.TrimRight(loc, "/") + "/" + elem
	}
	return filepath.Join(loc, elem)
}

// validator checks a decoded Config. It skips problems under a path the decoder already
// reported, so one mistake is not reported twice.
type validator struct {
	errs       Errors
	lines      map[string]int
	decodeErrs Errors
}

// severity checks that path holds one of SEV1 to SEV5.
func (v *validator) severity(path string, s Severity) {
	if s.Level() == 0 && !v.decodeFailed(path) {
		v.errorf(path, "must be one of SEV1 (critical) to SEV5 (info), got %q", string(s))
	}
}

func (v *validator) errorf(path, format string, args ...any) {
	for _, e := range v.decodeErrs {
		if within(path, e.Path) {
			return
		}
	}
	v.errs = append(v.errs, FieldError{Path: path, Msg: fmt.Sprintf(format, args...), Line: v.line(path)})
}

// line is the line of path, or of its nearest ancestor present in the document.
func (v *validator) line(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := v.lines[p]; ok {
			return l
		}
	}
	return 0
}

// decodeFailed reports whether the decoder reported a problem at or under path.
func (v *validator) decodeFailed(path string) bool {
	for _, e := range v.decodeErrs {
		if within(e.Path, path) {
			return true
		}
	}
	return false
}

// within reports whether path is base or lies under it.
func within(path, base string) bool {
	return path == base || strings.HasPrefix(path, base+".") || strings.HasPrefix(path, base+"[")
}

func (v *validator) present(path string) bool {
	_, ok := v.lines[path]
	return ok
}

func (v *validator) config(c *Config) {
	v.http(c.HTTP)
	v.slack(c)
	v.redis(c.Redis)
	v.alerts(c)
	v.kafka(c.Kafka)
	v.storage(c.Storage)
	v.charts(c.Charts)
	v.pipelines(c)
	v.health(c)
	v.positive("diagnose.timeout", c.Diagnose.Timeout)
	v.positive("repair.backup_max_age", c.Repair.BackupMaxAge)
	v.positive("repair.confirm_within", c.Repair.ConfirmWithin)
	v.nonNegative("repair.quiet_for", c.Repair.QuietFor)
}

func (v *validator) http(h HTTP) {
	if err := checkHostPort(h.Listen, true); err != nil {
		v.errorf("http.listen", "invalid address %q: %v", h.Listen, err)
	}
	if h.MetricsListen != "" {
		if err := checkHostPort(h.MetricsListen, true); err != nil {
			v.errorf("http.metrics_listen", "invalid address %q: %v", h.MetricsListen, err)
		} else if h.MetricsListen == h.Listen && !strings.HasSuffix(h.Listen, ":0") {
			v.errorf("http.metrics_listen", "is http.listen (%s); leave it empty to serve /metrics there", h.Listen)
		}
	}
	if h.MaxBodyBytes <= 0 {
		v.errorf("http.max_body_bytes", "must be greater than 0")
	}
}

func (v *validator) slack(c *Config) {
	s := c.Slack
	if !slashCommand.MatchString(s.Command) {
		v.errorf("slack.command", "invalid slash command %q (want one word starting with /, such as /streamwatch)", s.Command)
	}
	if s.DefaultChannel != "" {
		v.channel("slack.default_channel", s.DefaultChannel)
	} else if len(c.Pipelines) == 0 {
		v.errorf("slack.default_channel", "required when no pipelines are configured")
	}
	if s.HealthChannel != "" && s.HealthChannel != s.DefaultChannel {
		v.channel("slack.health_channel", s.HealthChannel)
	}
	v.nonNegative("slack.thread_coalesce", s.ThreadCoalesce)
	for i, ch := range s.AllowedChannels {
		v.channel(fmt.Sprintf("slack.allowed_channels[%d]", i), ch)
	}
	v.remediators("slack.remediators", s.Remediators)
	e := s.Escalation
	v.nonNegative("slack.escalation.after", e.After)
	v.remediators("slack.escalation.mention", e.Mention)
	for i, sev := range e.Severities {
		if _, ok := sevLevel(sev); !ok {
			v.errorf(fmt.Sprintf("slack.escalation.severities[%d]", i), "unknown severity %q (want SEV1, SEV2, SEV3, SEV4 or SEV5)", sev)
		}
	}
	if _, err := time.LoadLocation(s.TimeZone); err != nil || s.TimeZone == "" || s.TimeZone == "Local" {
		v.errorf("slack.time_zone", "unknown time zone %q (want an IANA name such as UTC or Europe/Paris)", s.TimeZone)
	}
	if w := e.Webhook; w.URLEnv != "" && !envName.MatchString(w.URLEnv) {
		v.errorf("slack.escalation.webhook.url_env", "invalid environment variable name %q (want letters, digits and _, such as PAGERDUTY_EVENTS_URL)", w.URLEnv)
	}
	if f := e.Webhook.Format; f != FormatPagerDuty {
		v.errorf("slack.escalation.webhook.format", "unknown format %q (want %s)", f, FormatPagerDuty)
	}
	last := e.After
	for i, l := range e.Levels {
		p := fmt.Sprintf("slack.escalation.levels[%d]", i)
		v.remediators(p+".mention", l.Mention)
		v.nonNegative(p+".repeat", l.Repeat)
		switch {
		case len(l.Mention) == 0:
			v.errorf(p+".mention", "names nobody: a level calls at least one user or user group")
		case l.After <= last:
			v.errorf(p+".after", "must be later than the level before (%s), got %s", last, l.After)
		}
		last = max(last, l.After)
	}
	v.nonNegative("slack.escalation.ack_timeout", e.AckTimeout)
	if e.After > 0 && len(e.Mention) > 0 && len(e.Severities) == 0 {
		v.errorf("slack.escalation.severities", "at least one severity, or nothing would escalate (after: 0s turns escalation off)")
	}
}

func (v *validator) remediators(path string, ids []string) {
	for i, id := range ids {
		if !remediatorID.MatchString(id) {
			v.errorf(fmt.Sprintf("%s[%d]", path, i),
				"invalid user or user-group ID %q (want U…, W… or S…, such as U0123ABCD)", id)
		}
	}
}

func (v *validator) channel(path, id string) {
	if !channelID.MatchString(id) {
		v.errorf(path, "invalid channel ID %q (want an ID such as C0123ABCD, not a channel name)", id)
	}
}

func (v *validator) redis(r Redis) {
	if r.KeyPrefix == "" {
		v.errorf("redis.key_prefix", "must not be empty")
	} else if strings.ContainsFunc(r.KeyPrefix, isSpaceOrControl) {
		v.errorf("redis.key_prefix", "must not contain spaces or control characters")
	}
	if r.MinReplicasAcked < 0 {
		v.errorf("redis.min_replicas_acked", "must be 0 (do not wait for replicas) or more, not %d", r.MinReplicasAcked)
	}
	// WAIT takes whole milliseconds, and 0 would wait forever.
	if r.ReplicaAckTimeout < time.Millisecond || r.ReplicaAckTimeout > time.Minute {
		v.errorf("redis.replica_ack_timeout", "must be between 1ms and 1m, not %s", r.ReplicaAckTimeout)
	}
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

func (v *validator) alerts(c *Config) {
	a := c.Alerts
	if len(a.GroupBy) == 0 {
		v.errorf("alerts.group_by", "must name at least one label")
	}
	seen := map[string]bool{}
	for i, label := range a.GroupBy {
		p := fmt.Sprintf("alerts.group_by[%d]", i)
		switch {
		case label == "":
			v.errorf(p, "must not be empty")
		case seen[label]:
			v.errorf(p, "duplicate label %q", label)
		}
		seen[label] = true
	}
	v.nonNegative("alerts.auto_resolve_after", a.AutoResolveAfter)
	v.positive("alerts.incident_retention", a.IncidentRetention)
	if a.Flood.NewIncidentsPerMinute < 0 {
		v.errorf("alerts.flood.new_incidents_per_minute", "must not be negative (0 turns flood protection off), got %d", a.Flood.NewIncidentsPerMinute)
	}
	v.positive("alerts.flood.quiet_for", a.Flood.QuietFor)
	v.severity("alerts.flood.exempt_severity", a.Flood.ExemptSeverity)
	for i, hb := range a.Heartbeats {
		p := fmt.Sprintf("alerts.heartbeats[%d]", i)
		if len(hb.Match) == 0 {
			v.errorf(p+".match", "needs at least one label, such as {alertname: Watchdog}")
		}
		v.positive(p+".every", hb.Every)
		if hb.Channel == "" && c.Slack.DefaultChannel == "" {
			v.errorf(p+".channel", "required (no slack.default_channel)")
		} else if hb.Channel != "" {
			v.channel(p+".channel", hb.Channel)
		}
	}
	for i, r := range a.Routes {
		p := fmt.Sprintf("alerts.routes[%d]", i)
		if len(r.Match) == 0 && len(r.MatchRE) == 0 && !v.decodeFailed(p+".match_re") {
			v.errorf(p, "needs match or match_re")
		}
		for _, label := range sortedKeys(r.Match) {
			if label == "" {
				v.errorf(p+".match", "label names must not be empty")
			}
		}
		switch _, ok := c.Pipeline(r.Pipeline); {
		case r.Pipeline == "":
			v.errorf(p+".pipeline", "required")
		case !ok:
			v.errorf(p+".pipeline", "unknown pipeline %q", r.Pipeline)
		}
	}
}

func (v *validator) kafka(k Kafka) {
	v.positive("kafka.sample_interval", k.SampleInterval)
	for _, name := range sortedKeys(k.Clusters) {
		v.cluster(keyPath("kafka.clusters", name), name, k.Clusters[name])
	}
}

func (v *validator) cluster(p, name string, c KafkaCluster) {
	if !pipelineName.MatchString(name) {
		v.errorf(p, "invalid cluster name %q (want lower-case letters, digits, '.', '_' or '-')", name)
	}
	if len(c.Brokers) == 0 {
		v.errorf(p+".brokers", "required")
	}
	for i, b := range c.Brokers {
		if err := checkHostPort(b, false); err != nil {
			v.errorf(fmt.Sprintf("%s.brokers[%d]", p, i), "invalid broker address %q: %v", b, err)
		}
	}
	if !kafkaVersion.MatchString(c.Version) {
		v.errorf(p+".version", "invalid version %q (want dotted numbers such as \"3.6.0\", or \"0.11.0.2\" before 1.0)", c.Version)
	}
	if c.ClientID == "" {
		v.errorf(p+".client_id", "must not be empty")
	}
	v.positive(p+".timeout", c.Timeout)

	t := c.TLS
	if (t.CertFile == "") != (t.KeyFile == "") {
		v.errorf(p+".tls", "cert_file and key_file must be set together")
	}
	if !t.Enabled && (t.CAFile != "" || t.CertFile != "" || t.KeyFile != "") {
		v.errorf(p+".tls.enabled", "must be true when ca_file, cert_file or key_file is set")
	}

	s := c.SASL
	if s.Mechanism == "" {
		if s.Username != "" || s.PasswordEnv != "" {
			v.errorf(p+".sasl.mechanism", "required when username or password_env is set")
		}
		return
	}
	if !slices.Contains(saslMechanisms, s.Mechanism) {
		v.errorf(p+".sasl.mechanism", "unknown mechanism %q (want %s)", s.Mechanism, strings.Join(saslMechanisms, ", "))
	}
	if s.Username == "" {
		v.errorf(p+".sasl.username", "required with mechanism %s", s.Mechanism)
	}
	switch {
	case s.PasswordEnv == "":
		v.errorf(p+".sasl.password_env", "required with mechanism %s", s.Mechanism)
	case !envName.MatchString(s.PasswordEnv):
		v.errorf(p+".sasl.password_env", "invalid environment variable name %q", s.PasswordEnv)
	}
}

func (v *validator) storage(s Storage) {
	if s.S3.Region == "" {
		v.errorf("storage.s3.region", "must not be empty")
	}
	if s.S3.Endpoint != "" {
		u, err := url.Parse(s.S3.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf("storage.s3.endpoint", "invalid endpoint %q (want an http:// or https:// URL)", s.S3.Endpoint)
		}
	}
	if s.GCS.Endpoint != "" {
		u, err := url.Parse(s.GCS.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf("storage.gcs.endpoint", "invalid endpoint %q (want an http:// or https:// URL)", s.GCS.Endpoint)
		}
	}
	if s.Azure.Endpoint != "" {
		u, err := url.Parse(s.Azure.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf("storage.azure.endpoint", "invalid endpoint %q (want an http:// or https:// URL, such as https://account.blob.core.windows.net)", s.Azure.Endpoint)
		}
	}
}

// maxChartsWindow bounds charts.window: every pipeline keeps a point a minute of it in Redis.
const maxChartsWindow = 7 * 24 * time.Hour

func (v *validator) charts(c Charts) {
	switch {
	case c.Window < time.Minute:
		v.errorf("charts.window", "must be at least 1m, got %s", c.Window)
	case c.Window > maxChartsWindow:
		v.errorf("charts.window", "must be at most %s (a point a minute of it is kept per pipeline), got %s", maxChartsWindow, c.Window)
	}
	if _, err := time.LoadLocation(c.TimeZone); err != nil || c.TimeZone == "" || c.TimeZone == "Local" {
		v.errorf("charts.time_zone", "unknown time zone %q (want an IANA name such as UTC or Europe/Paris)", c.TimeZone)
	}
}

func (v *validator) pipelines(c *Config) {
	first := map[string]int{}
	for i, pl := range c.Pipelines {
		p := fmt.Sprintf("pipelines[%d]", i)
		switch j, dup := first[pl.Name]; {
		case pl.Name == "":
			v.errorf(p+".name", "required")
		case !pipelineName.MatchString(pl.Name):
			v.errorf(p+".name", "invalid name %q (want lower-case letters, digits, '.', '_' or '-', starting with a letter or digit)", pl.Name)
		case dup:
			v.errorf(p+".name", "duplicate pipeline name %q (also pipelines[%d])", pl.Name, j)
		default:
			first[pl.Name] = i
		}
		switch {
		case pl.Channel == "":
			v.errorf(p+".channel", "required (no slack.default_channel)")
		case pl.Channel != c.Slack.DefaultChannel:
			v.channel(p+".channel", pl.Channel)
		}
		v.pipelineKafka(c, p+".kafka", pl.Kafka)
		v.checkpoint(p+".checkpoint", pl.Checkpoint)
		v.probe(p, pl)
		v.detect(c, i, p, pl)
		for j, pattern := range pl.Logs.Paths {
			if _, err := filepath.Match(pattern, ""); err != nil || pattern == "" {
				v.errorf(fmt.Sprintf("%s.logs.paths[%d]", p, j), "invalid glob pattern %q", pattern)
			} else if strings.Contains(pattern, "://") {
				// An object-store prefix or glob: the part before the last "/" is a location.
				if err := checkLocation(pattern[:strings.LastIndex(pattern, "/")]); err != nil {
					v.errorf(fmt.Sprintf("%s.logs.paths[%d]", p, j), "invalid log location %q: %v", pattern, err)
				}
			}
		}
		if pl.Logs.MaxBytes <= 0 {
			v.errorf(p+".logs.max_bytes", "must be greater than 0")
		}
		v.remediators(p+".remediators", pl.Remediators)
	}
}

func (v *validator) pipelineKafka(c *Config, p string, k PipelineKafka) {
	v.positive(p+".stall_after", k.StallAfter)
	if k.AllowedLag < 0 {
		v.errorf(p+".allowed_lag", "must be 0 or more, got %d", k.AllowedLag)
	}
	if !v.present(p) {
		return
	}
	switch _, ok := c.Kafka.Clusters[k.Cluster]; {
	case k.Cluster == "" && len(c.Kafka.Clusters) == 0:
		v.errorf(p+".cluster", "required (no kafka.clusters are configured)")
	case k.Cluster == "":
		v.errorf(p+".cluster", "required (kafka.clusters has %d clusters: %s)",
			len(c.Kafka.Clusters), strings.Join(sortedKeys(c.Kafka.Clusters), ", "))
	case !ok:
		v.errorf(p+".cluster", "unknown cluster %q (kafka.clusters has: %s)",
			k.Cluster, strings.Join(sortedKeys(c.Kafka.Clusters), ", "))
	}
	if k.Group == "" {
		v.errorf(p+".group", "required")
	}
	for i, topic := range k.Topics {
		if topic == "" {
			v.errorf(fmt.Sprintf("%s.topics[%d]", p, i), "must not be empty")
		}
	}
}

// detect checks pipelines[].detect and pipelines[].kafka.publish_group: streamwatch commits to
// the publish group, so it must be a group nobody else relies on: never a pipeline's documented
// group, never another pipeline's publish group on the same cluster.
func (v *validator) detect(c *Config, i int, p string, pl Pipeline) {
	v.nonNegative(p+".detect.max_lag", pl.Detect.MaxLag)
	v.severity(p+".detect.severity", pl.Detect.Severity)
	v.nonNegative(p+".detect.heartbeat_after", pl.Detect.HeartbeatAfter)
	if rw := strings.TrimSpace(string(pl.Detect.RetentionWarning)); rw != "0%" && rw != "0" {
		if f := pl.Detect.RetentionWarning.Fraction(); f <= 0 || f >= 0.9 {
			v.errorf(p+".detect.retention_warning", "must be a percentage below 90%% (90%% opens an incident), such as 50%%, or 0%% for off; got %q", rw)
		}
	}
	pg := pl.Kafka.PublishGroup
	if pg == "" {
		return
	}
	path := p + ".kafka.publish_group"
	switch {
	case !pl.Kafka.Enabled():
		v.errorf(path, "needs the pipeline's kafka section")
		return
	case strings.TrimSpace(pg) != pg:
		v.errorf(path, "must not begin or end with spaces, got %q", pg)
		return
	case pg == pl.Kafka.Group:
		v.errorf(path, "is the documented group %q: streamwatch never commits to it (name a group of its own, e.g. %q)", pg, pl.Kafka.Group+"-spark")
		return
	}
	for j, other := range c.Pipelines {
		if j == i || other.Kafka.Cluster != pl.Kafka.Cluster {
			continue
		}
		switch {
		case other.Kafka.Group == pg:
			v.errorf(path, "is the documented group of pipeline %q: streamwatch never commits to it", other.Name)
			return
		case other.Kafka.PublishGroup == pg && j < i:
			v.errorf(path, "is also the publish_group of pipeline %q on cluster %s", other.Name, pl.Kafka.Cluster)
			return
		}
	}
}

func (v *validator) checkpoint(p string, cp Checkpoint) {
	v.positive(p+".stale_after", cp.StaleAfter)
	if cp.Location == "" {
		if v.present(p) {
			v.errorf(p+".location", "required")
		}
	} else if err := checkLocation(cp.Location); err != nil {
		v.errorf(p+".location", "invalid location %q: %v", cp.Location, err)
	}
	if cp.BackupLocation != "" {
		if err := checkLocation(cp.BackupLocation); err != nil {
			v.errorf(p+".backup_location", "invalid location %q: %v", cp.BackupLocation, err)
		}
	}
	if ju := cp.JobUser; ju.Set && v.present(p+".job_user.principal") {
		switch {
		case !isAzureHNS(cp.Location):
			v.errorf(p+".job_user.principal", "only for an abfss:// or abfs:// location (an object ID is judged against ADLS Gen2 ACLs)")
		case v.present(p+".job_user.uid") || len(ju.GIDs) > 0:
			v.errorf(p+".job_user", "either uid and gids (a local checkpoint) or principal (abfss://), not both")
		case !objectID.MatchString(ju.Principal):
			v.errorf(p+".job_user.principal", "must be a Microsoft Entra object ID such as 7d4b2f0e-3c1a-4e8b-9f6d-2a5c8e1b0d3f, got %q", ju.Principal)
		}
	} else if ju.Set {
		if !v.present(p + ".job_user.uid") {
			v.errorf(p+".job_user.uid", "required (the uid the Spark job runs as, e.g. 185)")
		} else if ju.UID < 0 || ju.UID > 1<<32-2 {
			v.errorf(p+".job_user.uid", "must be a uid between 0 and 4294967294, got %d", ju.UID)
		}
		for i, g := range ju.GIDs {
			if g < 0 || g > 1<<32-2 {
				v.errorf(fmt.Sprintf("%s.job_user.gids[%d]", p, i), "must be a gid between 0 and 4294967294, got %d", g)
			}
		}
	}
}

func (v *validator) probe(pipelinePath string, pl Pipeline) {
	p := pipelinePath + ".probe"
	if pl.Probe.Schedule != "" {
		if _, err := ParseSchedule(pl.Probe.Schedule); err != nil {
			v.errorf(p+".schedule", "invalid schedule %q for pipeline %q: %v", pl.Probe.Schedule, pl.Name, err)
		}
	}
	switch {
	case pl.Probe.Path == "":
		if v.present(p) && pl.Probe.Schedule != "" {
			v.errorf(p+".path", "required (no checkpoint.location to probe)")
		}
	case v.present(p + ".path"): // a derived path is checked as checkpoint.location
		if err := checkLocation(pl.Probe.Path); err != nil {
			v.errorf(p+".path", "invalid location %q: %v", pl.Probe.Path, err)
		}
	}
	v.positive(p+".slow_after", pl.Probe.SlowAfter)
}

func (v *validator) health(c *Config) {
	spec := c.Health.DigestSchedule
	if spec == "" {
		return
	}
	if _, err := ParseSchedule(spec); err != nil {
		v.errorf("health.digest_schedule", "invalid schedule %q: %v", spec, err)
	}
	if c.Slack.HealthChannel == "" {
		v.errorf("slack.health_channel", "required by health.digest_schedule (no slack.default_channel either)")
	}
}

func (v *validator) positive(path string, d time.Duration) {
	if d <= 0 {
		v.errorf(path, "must be greater than 0, got %s", d)
	}
}

func (v *validator) nonNegative(path string, d time.Duration) {
	if d < 0 {
		v.errorf(path, "must not be negative, got %s", d)
	}
}

// checkHostPort checks a host:port address; an empty host means every interface, which only a
// listen address may have, and port 0 (any free port) is likewise only for listening.
func checkHostPort(addr string, listen bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port: %w", err)
	}
	if host == "" && !listen {
		return fmt.Errorf("missing host")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !listen) {
		return fmt.Errorf("invalid port %q", port)
	}
	return nil
}

// checkLocation checks a storage location: a plain path, file:///path, s3://bucket[/prefix] or
// gs://bucket[/prefix].
func checkLocation(loc string) error {
	if strings.TrimSpace(loc) != loc {
		return fmt.Errorf("leading or trailing spaces")
	}
	if !strings.Contains(loc, "://") {
		return nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return fmt.Errorf("parse URL: %w", err)
	}
	switch u.Scheme {
	case "file":
		if (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") {
			return fmt.Errorf("a file:// location needs an absolute path, such as file:///var/lib/spark")
		}
	case "s3":
		if u.Host == "" {
			return fmt.Errorf("an s3:// location needs a bucket, such as s3://bucket/prefix")
		}
		if !s3Bucket.MatchString(u.Host) {
			return fmt.Errorf("invalid S3 bucket name %q", u.Host)
		}
	case "gs":
		if u.Host == "" {
			return fmt.Errorf("a gs:// location needs a bucket, such as gs://bucket/prefix")
		}
		if !gcsBucket.MatchString(u.Host) {
			return fmt.Errorf("invalid GCS bucket name %q", u.Host)
		}
	case "abfss", "abfs", "wasbs", "wasb":
		service := map[bool]string{true: "dfs", false: "blob"}[u.Scheme == "abfss" || u.Scheme == "abfs"]
		account, _, _ := strings.Cut(u.Host, ".")
		switch {
		case u.User == nil || u.Host == "":
			return fmt.Errorf("a %s:// location needs a container and an account, such as %s://container@account.%s.core.windows.net/prefix", u.Scheme, u.Scheme, service)
		case !azureContainer.MatchString(u.User.Username()):
			return fmt.Errorf("invalid Azure container name %q", u.User.Username())
		case !azureAccount.MatchString(account):
			return fmt.Errorf("invalid Azure storage account name %q", account)
		}
	default:
		return fmt.Errorf("unsupported scheme %q (want a plain path, file://, s3://, gs://, abfss:// or wasbs://)", u.Scheme)
	}
	return nil
}

// isAzureHNS reports whether loc is an ADLS Gen2 (hierarchical namespace) location.
func isAzureHNS(loc string) bool {
	return strings.HasPrefix(loc, "abfss://") || strings.HasPrefix(loc, "abfs://")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
