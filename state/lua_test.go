package state_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// TestScriptsLoad: every script, as it runs and as the call-budget test counts it, compiles
// in a real redis-server (a syntax error would otherwise show only when the script first runs).
func TestScriptsLoad(t *testing.T) {
	rdb, _ := testredis.Client(t)
	ctx := context.Background()
	for _, s := range state.Scripts() {
		for variant, src := range map[string]string{"as it runs": s.Source, "counting": s.Counting} {
			if err := rdb.ScriptLoad(ctx, src).Err(); err != nil {
				t.Errorf("%s (%s): %v", s.Name, variant, err)
			}
		}
	}
}

// TestEveryLuaFileIsInTheManifest: every file of state/lua is a script's body or a fragment of
// one, so that TestScriptsLoad and the call-budget test see all the Lua the store runs.
func TestEveryLuaFileIsInTheManifest(t *testing.T) {
	used := map[string]bool{}
	for _, s := range state.Scripts() {
		used[s.Name] = true
		for _, f := range s.Fragments {
			used[f] = true
		}
	}
	files := state.LuaFiles()
	for _, f := range files {
		if !used[f] {
			t.Errorf("state/lua/%s.lua is in no script of the manifest (lua.go)", f)
		}
	}
	for _, want := range []string{"record", "relocate", "record_progress", "record_probe_mark"} {
		if !slices.Contains(files, want) {
			t.Errorf("no state/lua/%s.lua among %v", want, files)
		}
	}
}

// needs reads a fragment's "Needs a, b, and the script's …" from its header comment.
var needs = regexp.MustCompile(`(?s)Needs ([a-z_, ]+?)(?:[,.;]| and the script| and, )`)

// TestScriptManifest: each script is made of exactly the fragments it needs: every fragment's
// own needs come before it, and every fragment is used (one of its functions is called by the
// fragments after it or the body).
func TestScriptManifest(t *testing.T) {
	fragments := map[string]bool{}
	for _, s := range state.Scripts() {
		for _, f := range s.Fragments {
			fragments[f] = true
		}
	}
	for _, s := range state.Scripts() {
		for i, f := range s.Fragments {
			src := state.LuaFile(f)
			if f != "lib" {
				m := needs.FindStringSubmatch(src)
				if m == nil {
					t.Errorf("fragment %s does not say what it needs", f)
					continue
				}
				for _, n := range strings.Split(m[1], ",") {
					n = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(n), "and "))
					if n != "" && !slices.Contains(s.Fragments[:i], n) {
						t.Errorf("script %s: fragment %s needs %s before it (fragments %v)", s.Name, f, n, s.Fragments)
					}
				}
			}
			rest := strings.Join(func() []string {
				var out []string
				for _, g := range s.Fragments[i+1:] {
					out = append(out, state.LuaFile(g))
				}
				return append(out, state.LuaFile(s.Name))
			}(), "\n")
			used := f == "lib" // P, call and result serve every script
			for _, fn := range state.LuaFunctions(src) {
				if regexp.MustCompile(`\b` + fn + `\(`).MatchString(rest) {
					used = true
					break
				}
			}
			if !used {
				t.Errorf("script %s includes fragment %s but uses none of its functions %v", s.Name, f, state.LuaFunctions(src))
			}
		}
	}
	if len(fragments) < 9 {
		t.Errorf("fragments %v", fragments)
	}
}

// fragment runs a driver of a fragment against the test's own keys.
func fragment(t *testing.T, head string, fragments []string, body string, args ...any) any {
	t.Helper()
	rdb, prefix := testredis.Client(t)
	v, err := state.Fragment(context.Background(), rdb, "{"+prefix+"}", head, fragments, body, args...)
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	return v
}

// Each fragment, driven directly.
func TestFragments(t *testing.T) {
	const runHead = `local now_s, recent = "1000000", "0990000"
local now, window = 1000000, 10000
local flood_limit, flood_quiet = 2, 60000`
	cases := []struct {
		name      string
		fragments []string
		body      string
		want      string
	}{
		{"lib: results are named; events go to the timeline and the outbox", []string{"lib"}, `
call("HSET", ik("INC-1"), "channel", "C1")
event("INC-1", 5, "acknowledged", "alice", {"note", "", "count", 0, "by", "bob"})
enqueue("INC-1", "event", "acknowledged", "alice", {"since", 7})
local tl = call("XRANGE", ik("INC-1", "timeline"), "-", "+")
local ob = call("XRANGE", P .. ":outbox", "-", "+")
return result("timeline", table.concat(tl[1][2], " "), "outbox", table.concat(ob[1][2], " "), "seq", call("HGET", ik("INC-1"), "seq"))`,
			"[3 timeline outbox seq at 5 event acknowledged actor alice by bob inc INC-1 seq 1 kind event channel C1 event acknowledged actor alice since 7 1]"},
		{"incident: severity, closing keys and retiring", []string{"lib", "incident"}, `
call("HSET", ik("INC-1"), "key", "k1", "root_channel", "C1", "root_ts", "1.2")
call("SADD", ik("INC-1", "keys"), "k0")
local ks = closing_keys("INC-1", 60000)
retire("INC-1", 60000)
return {more_severe(0, 3), more_severe(2, 3), more_severe(4, 1), table.concat(ks, ","), call("GET", last("k1")),
  call("PTTL", ik("INC-1")) > 0 and 1 or 0}`, "[3 2 1 k0,k1 INC-1 1]"},
		{"cache: one read, one write a run", []string{"lib", "cache"}, `
call("HSET", ik("INC-1"), "id", "INC-1", "count", 5)
set("INC-1", "count", tonumber(inc("INC-1").v.count) + 1)
set("INC-1", "count", tonumber(inc("INC-1").v.count) + 1)
local before = call("HGET", ik("INC-1"), "count")
flush()
set("INC-9", "count", 1) -- gone: left alone
flush()
return {before, call("HGET", ik("INC-1"), "count"), call("EXISTS", ik("INC-9"))}`, "[5 7 0]"},
		{"dedup: states, the firing count, duplicates", []string{"lib", "incident", "cache", "dedup"}, runHead + `
--%%` + `
local a = {alert_state('{"status":"resolved","last_seen":12,"d":"ab"}')}
local b = {alert_state("f:999:cd")}
local id = open("k", "h", "t", 3, "", "C1", "am", "")
note_alert(id, "fp1", "f", "d1", nil, nil, "", "")
note_alert(id, "fp2", "f", "d2", nil, nil, "", "")
local prev = call("HGET", ik(id, "alerts"), "fp1")
note_alert(id, "fp1", "r", "d1", prev, alert_state(prev))
duplicate(id, 2, "again")
flush()
local v = call("HMGET", ik(id), "firing", "count", "severity", "pending", "last_detail")
return {a[1], a[2], a[3], b[1], b[2], b[3], v[1], v[2], v[3], v[4], v[5], call("ZSCORE", P .. ":due", id)}`,
			"[r 12 ab f 999 cd 1 2 2 1 again 1000000]"},
		{"news: what an alert brings", []string{"lib", "incident", "cache", "dedup", "news"}, runHead + `
--%%` + `
call("HSET", ik("INC-1"), "id", "INC-1", "first_seen", "1")
call("HSET", ik("INC-1", "alerts"), "fp1", "f:1:aaaaaaaabbbbbbbb", "fp2", "r:1:aaaaaaaabbbbbbbb")
local out = {}
for _, c in ipairs({{"fp1", "aaaaaaaabbbbbbbb"}, {"fp1", "ccccccccbbbbbbbb"}, {"fp1", "aaaaaaaacccccccc"}, {"fp2", "aaaaaaaabbbbbbbb"}, {"fp3", "x"}}) do
  local prev = call("HGET", ik("INC-1", "alerts"), c[1])
  local st, _, d = alert_state(prev)
  local n = news_of("INC-1", c[2], prev, st, d)
  out[#out + 1] = n or "none"
end
return out`, "[none labels annotations again joined]"},
		{"correlation: the pipeline's incident", []string{"lib", "incident", "cache", "dedup", "news", "correlation"}, runHead + `
--%%` + `
call("HSET", ik("INC-1"), "id", "INC-1", "status", "open", "source", "detect")
pipe_index("sms", "detect", "INC-1")
return {correlate_target("sms", "alertmanager") or "none", correlate_target("other", "alertmanager") or "none",
  own_source("probe") and 1 or 0}`, "[INC-1 none 1]"},
		{"flood_end: a flood ends with its fields", []string{"lib", "flood_end"}, `
call("HSET", fk("C1"), "id", "INC-5", "hot_until", 100)
call("HSET", ik("INC-5"), "id", "INC-5", "flood_limit", 20, "flood_quiet", 300000, "channel", "C1")
end_flood("C1", "INC-5", 500)
local ob = call("XRANGE", P .. ":outbox", "-", "+")
return {call("HGET", fk("C1"), "ended"), table.concat(ob[1][2], " ")}`,
			"[1 inc INC-5 seq 1 kind event channel C1 event flood_over actor streamwatch limit 20 quiet 300000 since 100]"},
		{"flood: the minute's window in memory, written once", []string{"lib", "incident", "cache", "dedup", "flood_end", "flood"}, runHead + `
--%%` + `
local hot = {}
for i = 1, 4 do hot[#hot + 1] = count_new("C1") and 1 or 0 end
local fid = flood_open("C1")
flood_join(fid, "k1", "t", 3, "d", "a=1\31b=2")
flood_join(fid, "k1", "t", 3, "d", "a=1")
flush_floods()
flush()
local f = call("HMGET", ik(fid), "count", "distinct", "newest1")
return {hot[1], hot[2], hot[3], hot[4], call("LLEN", fk("C1") .. ":win"), f[1], f[2], f[3],
  call("ZSCORE", ik(fid, "flood:keys"), "k1"), call("ZSCORE", ik(fid, "flood:labels"), "a=1")}`,
			"[0 0 1 1 3 2 1 k1 2 1]"},
		{"silences: a label silence's list, an incident silence's end", []string{"lib", "incident", "silences"}, `
call("HSET", sk("SIL-1"), "kind", "labels", "expire_at", 0)
local held = silenced("SIL-1", "k", "fp", "t", 1000)
call("HSET", sk("SIL-2"), "kind", "incident", "incident", "INC-1", "by", "bob")
call("ZADD", P .. ":silences", 5000, "SIL-2")
call("HSET", ik("INC-1"), "silence_id", "SIL-2", "status", "open", "count", 9, "silence_count0", 4, "silenced_since", 1000, "channel", "C1")
local ended = end_silence("SIL-2", 3000, "", 0)
return {held and 1 or 0, call("HGET", sk("SIL-1"), "hits"), ended and 1 or 0, call("HGET", ik("INC-1"), "silenced_ms"),
  call("XLEN", P .. ":outbox")}`, "[1 1 1 2000 1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head, body, _ := strings.Cut(c.body, "\n--%%")
			if !strings.Contains(c.body, "--%%") {
				head, body = "", c.body
			}
			if got := fmt.Sprint(fragment(t, head, c.fragments, body)); got != c.want {
				t.Errorf("got %s\nwant %s", got, c.want)
			}
		})
	}
}
