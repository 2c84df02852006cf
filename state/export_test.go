package state

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// SetBeforeRun installs a function called before each shared script run of RecordAlerts.
func (s *Store) SetBeforeRun(f func()) {
	s.commit.mu.Lock()
	s.commit.beforeRun = f
	s.commit.mu.Unlock()
}

// Queued is how many RecordAlerts calls wait for the next run.
func (s *Store) Queued() int {
	s.commit.mu.Lock()
	defer s.commit.mu.Unlock()
	return len(s.commit.queue)
}

// CountCalls makes the store run the counting variants of its scripts and returns the count
// of the Redis calls they make.
func (s *Store) CountCalls() *atomic.Int64 {
	s.calls = new(atomic.Int64)
	return s.calls
}

// Script is a script of the manifest, for the tests.
type Script struct {
	Name, Source, Counting string
	Fragments              []string
}

// Scripts lists every script.
func Scripts() []Script {
	var out []Script
	for _, s := range allScripts {
		out = append(out, Script{Name: s.name, Source: s.source, Counting: assemble(s.name, s.fragments, true), Fragments: s.fragments})
	}
	return out
}

// LuaFiles names the files of state/lua, without ".lua".
func LuaFiles() []string {
	entries, err := luaFiles.ReadDir("lua")
	if err != nil {
		panic(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".lua"))
	}
	return out
}

// LuaFile is a file of state/lua.
func LuaFile(name string) string { return luaFile(name) }

// LuaFunctions are the functions a Lua fragment defines.
func LuaFunctions(src string) []string {
	var out []string
	for _, m := range luaLocalFunction.FindAllStringSubmatch(src, -1) {
		out = append(out, m[1])
	}
	return out
}

// Fragment runs a driver: the prelude, head, the fragments, then body, as a script of its own,
// with KEYS {base} and args.
func Fragment(ctx context.Context, rdb redis.UniversalClient, base, head string, fragments []string, body string, args ...any) (any, error) {
	src := "local call = redis.call\n" + luaConsts() + "local function main()\n" + head + "\n"
	for _, f := range fragments {
		src += luaFile(f) + "\n"
	}
	src += body + "\nend\nreturn main()\n"
	return rdb.Eval(ctx, src, []string{base}, args...).Result()
}

// Base is the store's key base, {prefix}.
func (s *Store) Base() string { return s.base }

// LabelsAndDigest and AlertDigest, for the tests.
var (
	LabelsAndDigest = labelsAndDigest
	AlertDigest     = alertDigest
)
