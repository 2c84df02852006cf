package alerts

import (
	"maps"
	"regexp"
	"strings"
)

// Route sends the alerts whose labels match to a pipeline. A label an alert
// does not have reads as "", as in Alertmanager: Match {"team": ""} matches
// alerts without a team. A route with neither Match nor MatchRE matches
// every alert.
type Route struct {
	// Match holds labels that must equal the given values.
	Match map[string]string
	// MatchRE holds labels that must match the given expressions, which the
	// caller has compiled and anchored. A nil expression matches nothing.
	MatchRE  map[string]*regexp.Regexp
	Pipeline string
}

func (rt Route) matches(labels map[string]string) bool {
	for name, want := range rt.Match {
		if labels[name] != want {
			return false
		}
	}
	for name, re := range rt.MatchRE {
		if re == nil || !re.MatchString(labels[name]) {
			return false
		}
	}
	return true
}

// Router assigns alerts a pipeline, a channel and a dedup key. It is
// immutable and safe for concurrent use. The zero Router routes every alert
// to no pipeline and channel "", keyed by fingerprint.
type Router struct {
	routes         []Route
	groupBy        []string
	channels       map[string]string
	defaultChannel string
}

// NewRouter returns a Router that tries routes in order, groups alerts by
// the groupBy labels and sends each pipeline's alerts to its channel in
// pipelineChannels (whose keys are the known pipelines; a pipeline whose
// channel is "" uses defaultChannel). The arguments are copied.
func NewRouter(routes []Route, groupBy []string, pipelineChannels map[string]string, defaultChannel string) *Router {
	r := &Router{
		routes:         make([]Route, len(routes)),
		groupBy:        append([]string(nil), groupBy...),
		channels:       maps.Clone(pipelineChannels),
		defaultChannel: defaultChannel,
	}
	for i, rt := range routes {
		r.routes[i] = Route{Match: maps.Clone(rt.Match), MatchRE: maps.Clone(rt.MatchRE), Pipeline: rt.Pipeline}
	}
	return r
}

// Route sets a's Pipeline, Channel and Key.
//
// Pipeline: an alert's own pipeline label wins when it names a known
// pipeline. Otherwise (no such label, or one naming an unknown pipeline, say
// a typo or a pipeline since removed) the first route whose Match and MatchRE
// all hold decides; if none does, Pipeline is "".
//
// Channel: the pipeline's channel, else the default channel.
//
// Key: the alert's DedupKey when it has one. Otherwise the group_by labels as
// name=value pairs in group_by order, joined by "|", with `\`, `|` and `=`
// escaped by a backslash so that no two label sets share a key:
// "alertname=client replied sms|pipeline=sms-replies". The name pipeline
// stands for the routed pipeline, whether or not the alert has such a label;
// an alert that no route matched keeps its own pipeline label's value there,
// so alerts of two unknown pipelines do not merge into one incident. With
// an empty group_by, Key is "fingerprint=" and the alert's fingerprint: each
// distinct alert is its own incident.
func (r *Router) Route(a *Alert) {
	if a == nil {
		return
	}
	a.Pipeline = r.pipeline(a.Labels)
	a.Channel = r.defaultChannel
	if ch := r.channels[a.Pipeline]; a.Pipeline != "" && ch != "" {
		a.Channel = ch
	}
	a.Key = r.key(a)
}

func (r *Router) pipeline(labels map[string]string) string {
	if own := labels["pipeline"]; own != "" {
		if _, known := r.channels[own]; known {
			return own
		}
	}
	for _, rt := range r.routes {
		if rt.matches(labels) {
			return rt.Pipeline
		}
	}
	return ""
}

var keyEscaper = strings.NewReplacer(`\`, `\\`, `|`, `\|`, `=`, `\=`)

func (r *Router) key(a *Alert) string {
	if a.DedupKey != "" {
		return a.DedupKey
	}
	if len(r.groupBy) == 0 {
		return "fingerprint=" + keyEscaper.Replace(a.Fingerprint)
	}
	var b strings.Builder
	for i, name := range r.groupBy {
		value := a.Labels[name]
		if name == "pipeline" && a.Pipeline != "" {
			value = a.Pipeline
		}
		if i > 0 {
			b.WriteByte('|')
		}
		keyEscaper.WriteString(&b, name)
		b.WriteByte('=')
		keyEscaper.WriteString(&b, value)
	}
	return b.String()
}
