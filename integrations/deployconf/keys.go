package deployconf

import (
	"slices"
	"strings"
)

// option is a Kafka source option or streaming setting, as Spark names it.
type option int

const (
	optNone option = iota
	optGroupID
	optGroupIDPrefix
	optSubscribe
	optSubscribePattern
	optAssign
	optBootstrap
	optCheckpoint
	optCheckpointRoot // spark.sql.streaming.checkpointLocation: a root, not the query's own location
	optFailOnDataLoss
	optLast = optFailOnDataLoss
)

// optionNames are lower-case: keys are matched case-insensitively.
var optionNames = []struct {
	name string
	opt  option
}{
	{"kafka.group.id", optGroupID},
	{"groupidprefix", optGroupIDPrefix},
	{"subscribe", optSubscribe},
	{"subscribepattern", optSubscribePattern},
	{"assign", optAssign},
	{"kafka.bootstrap.servers", optBootstrap},
	{"checkpointlocation", optCheckpoint},
	{"failondataloss", optFailOnDataLoss},
}

// prefixes are the ones jobs put before option names in config files, lower-case.
var prefixes = []string{"spark.", "option.", "options.", "spark.kafka.", "spark.streaming.", "spark.sql.streaming."}

const sqlStreamingPrefix = "spark.sql.streaming."

// Match ranks: a spelling from the package doc's table beats one found after other leading
// segments, which could as well belong to a sink or another query.
const (
	rankDirect = 0
	rankSuffix = 1
)

// matchKey says which option key names, and how directly.
func matchKey(key string) (option, int) {
	k := strings.ToLower(strings.TrimSpace(key))
	for _, o := range optionNames {
		if k == o.name {
			return o.opt, rankDirect
		}
		if !strings.HasSuffix(k, "."+o.name) {
			continue
		}
		lead := k[:len(k)-len(o.name)]
		opt := o.opt
		if opt == optCheckpoint && strings.HasSuffix(lead, sqlStreamingPrefix) {
			opt = optCheckpointRoot
		}
		if slices.Contains(prefixes, lead) {
			return opt, rankDirect
		}
		return opt, rankSuffix
	}
	return optNone, 0
}

// spelling is the option's name as Spark documents it, for messages.
func (o option) spelling() string {
	switch o {
	case optGroupID:
		return "kafka.group.id"
	case optGroupIDPrefix:
		return "groupIdPrefix"
	case optSubscribe:
		return "subscribe"
	case optSubscribePattern:
		return "subscribePattern"
	case optAssign:
		return "assign"
	case optBootstrap:
		return "kafka.bootstrap.servers"
	case optCheckpoint:
		return "checkpointLocation"
	case optCheckpointRoot:
		return "spark.sql.streaming.checkpointLocation"
	case optFailOnDataLoss:
		return "failOnDataLoss"
	}
	return "unknown option"
}

// isList says whether the option's value is a comma-separated list (or a YAML sequence).
func (o option) isList() bool { return o == optSubscribe || o == optBootstrap }
