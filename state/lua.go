package state

import (
	"context"
	"embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The incident engine's Lua lives in state/lua, one file per concept: lib (keys, the timeline,
// the outbox, named results), incident (closing, retiring, severity), cache (an incident's
// fields read once a run and written once), dedup (joining, duplicates, the alert list and its
// firing count), news, correlation, flood_end and flood, silences; and one file per script
// body. Each script below is assembled from exactly the fragments it needs, in the order
// given: a fragment uses only those before it (TestScriptManifest holds both). A body file may
// start with a head, the script's own declarations the fragments use (now, window…), ended by
// a line "--%%". The scripts make no sentences: they store and return fields and codes, and Go
// makes the text (event.go, and where replies are made).
//
//go:embed lua/*.lua
var luaFiles embed.FS

// luaScript is one script: its name (the body's file) and the fragments it is made of; prod
// is what runs, counting the same with its Redis calls counted (the call-budget test).
type luaScript struct {
	name      string
	fragments []string
	source    string
	prod      *redis.Script
	counting  *redis.Script
}

// Per-alert arguments of the record script, in order (recordBatch sends them).
var recordArgNames = []string{"key", "hash", "fp", "status", "title", "severity", "pipeline", "channel", "source",
	"detail", "labels", "digest", "links", "silence"}

// recordHeader is how many run-wide arguments the record script takes before the alerts'.
const recordHeader = 9

// luaConsts are the limits the scripts share with Go.
func luaConsts() string {
	var b strings.Builder
	for _, c := range []struct {
		name  string
		value int
	}{
		{"max_alerts", MaxListedAlerts}, {"max_flood_keys", MaxListedFloodKeys}, {"max_events", MaxTimelineEvents},
		{"max_news", maxNews}, {"max_joined", maxJoinedNames}, {"max_silenced_listed", maxSilencedListed},
		{"flood_top", floodTop}, {"flood_exact", floodExact}, {"flood_sample", floodSample},
		{"arg_first", recordHeader + 1}, {"arg_count", len(recordArgNames)},
	} {
		fmt.Fprintf(&b, "local %s = %d\n", c.name, c.value)
	}
	for i, n := range recordArgNames {
		fmt.Fprintf(&b, "local arg_%s = %d\n", n, i)
	}
	return b.String()
}

func luaFile(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("state: no Lua file %s: %v", name, err))
	}
	return string(b)
}

// assemble makes a script's source: the way it calls Redis, the limits, the body's head, the
// fragments, then the body, all inside one function (so that the counting variant can return
// the count with the result).
func assemble(body string, fragments []string, counting bool) string {
	var b strings.Builder
	if counting {
		b.WriteString("local calls = 0\nlocal function call(...)\n  calls = calls + 1\n  return redis.call(...)\nend\n")
	} else {
		b.WriteString("local call = redis.call\n")
	}
	b.WriteString(luaConsts())
	b.WriteString("local function main()\n")
	head, main, found := strings.Cut(luaFile(body), "\n--%%\n")
	if found {
		b.WriteString(head + "\n")
	} else {
		main = head
	}
	for _, f := range fragments {
		b.WriteString(luaFile(f) + "\n")
	}
	b.WriteString(main)
	b.WriteString("\nend\n")
	if counting {
		b.WriteString("local r = main()\nreturn {calls, r}\n")
	} else {
		b.WriteString("return main()\n")
	}
	return b.String()
}

var allScripts []*luaScript

func newScript(body string, fragments ...string) *luaScript {
	s := &luaScript{name: body, fragments: fragments, source: assemble(body, fragments, false)}
	s.prod = redis.NewScript(s.source)
	s.counting = redis.NewScript(assemble(body, fragments, true))
	allScripts = append(allScripts, s)
	return s
}

// The scripts, with the fragments each is made of.
var (
	recordScript      = newScript("record", "lib", "incident", "cache", "dedup", "news", "correlation", "flood_end", "flood", "silences")
	pumpScript        = newScript("pump", "lib")
	ackScript         = newScript("ack", "lib")
	unackScript       = newScript("unack", "lib")
	reopenScript      = newScript("reopen", "lib", "incident")
	unmergeScript     = newScript("unmerge", "lib", "incident")
	resolveScript     = newScript("resolve", "lib", "incident")
	mergeScript       = newScript("merge", "lib", "incident", "cache", "dedup")
	noteScript        = newScript("note", "lib")
	claimDiagnoses    = newScript("claim_diagnoses", "lib")
	completeScript    = newScript("complete", "lib")
	relocateScript    = newScript("relocate", "lib")
	setSeverityScript = newScript("severity", "lib")
	assignScript      = newScript("assign", "lib")
	escalateScript    = newScript("escalate", "lib")
	keepContextScript = newScript("keep_context", "lib")
	sweepScript       = newScript("sweep", "lib", "incident")
	endFloodsScript   = newScript("end_floods", "lib", "flood_end")

	createSilenceScript     = newScript("create_silence", "lib", "incident", "silences")
	silenceIncidentScript   = newScript("silence_incident", "lib", "incident", "silences")
	expireSilenceScript     = newScript("expire_silence", "lib", "incident", "silences")
	extendSilenceScript     = newScript("extend_silence", "lib", "incident", "silences")
	expireDueSilencesScript = newScript("expire_due_silences", "lib", "incident", "silences")
	loadSilencesScript      = newScript("load_silences", "lib")

	updateDetectScript  = newScript("update_detect", "lib")
	noteDetectScript    = newScript("note_detect", "lib", "cache", "dedup", "news", "correlation")
	recoverDetectScript = newScript("recover_detect", "lib", "cache", "dedup", "news", "correlation")
	saveDetectScript    = newScript("save_detect", "lib")
	recordProbeScript   = newScript("record_probe")
	unlockScript        = newScript("unlock")
	refreshScript       = newScript("refresh_lock")

	recordProgressScript  = newScript("record_progress")
	recordProbeMarkScript = newScript("record_probe_mark")
)

// run runs a script; with the store's call counter on (tests), the counting variant, whose
// calls are added to it.
func (s *Store) run(ctx context.Context, sc *luaScript, keys []string, args ...any) *redis.Cmd {
	return s.runOn(ctx, s.rdb, sc, keys, args...)
}

// runOn is run on rdb: the pool, or one connection of the primary (replicas.go).
func (s *Store) runOn(ctx context.Context, rdb redis.Scripter, sc *luaScript, keys []string, args ...any) *redis.Cmd {
	if s.calls == nil {
		return sc.prod.Run(ctx, rdb, keys, args...)
	}
	v, err := sc.counting.Run(ctx, rdb, keys, args...).Result()
	if err != nil {
		return redis.NewCmdResult(nil, err)
	}
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return redis.NewCmdResult(nil, fmt.Errorf("script %s: counting answer %v", sc.name, v))
	}
	n, _ := pair[0].(int64)
	s.calls.Add(n)
	return redis.NewCmdResult(pair[1], nil)
}

// luaLocalFunction finds a fragment's functions, for TestScriptManifest.
var luaLocalFunction = regexp.MustCompile(`(?m)^local function ([a-z_0-9]+)`)
