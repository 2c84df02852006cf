package app

import (
	"reflect"
	"slices"
	"strings"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/internal/human"
)

// Reload applies a new configuration, already loaded and validated (config.Load), to the
// running app: what can change live changes now (applied), the rest is named as taking effect
// at the next restart. The secrets are not read again.
//
// Live today: slack.time_zone. Every other key is wired into the parts New built (the
// scheduler's jobs, the router, the deliverer, the Kafka clients), which a reload does not
// rebuild.
func (a *App) Reload(cfg *config.Config) (applied, restart []string) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	old := a.running
	if old == nil {
		old = a.opt.Config
	}
	if cfg.Slack.TimeZone != old.Slack.TimeZone {
		human.SetZone(cfg.Slack.Location())
		applied = append(applied, "slack.time_zone")
	}
	restart = changedKeys(reflect.ValueOf(*old), reflect.ValueOf(*cfg), "", applied)
	next := *old
	next.Slack.TimeZone = cfg.Slack.TimeZone
	a.running = &next
	return applied, restart
}

// changedKeys names the keys that differ between a and b (structs of the same type), to the
// depth of their sections' fields (slack.escalation, pipelines), leaving out skip.
func changedKeys(a, b reflect.Value, prefix string, skip []string) []string {
	var out []string
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if name == "-" || name == "" {
			continue
		}
		key := prefix + name
		av, bv := a.Field(i), b.Field(i)
		if reflect.DeepEqual(av.Interface(), bv.Interface()) || slices.Contains(skip, key) {
			continue
		}
		if prefix == "" && av.Kind() == reflect.Struct {
			out = append(out, changedKeys(av, bv, key+".", skip)...)
			continue
		}
		out = append(out, key)
	}
	return out
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}
