package remediate_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// now is the clock of every test: 2026-11-30T10:41:05Z.
var now = time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)

const kafkaInitial = "\x00v1\n{\"client.replies.sms\":{\"0\":0,\"1\":0,\"2\":0}}"

// spec is a Kafka query with state, checksums and a sources/ file; batch 8 is planned, 7 is
// the latest commit (batch 8 in flight).
func spec() sparktest.Spec {
	return sparktest.Spec{
		FirstBatch: 0, LatestBatch: 8, LatestCommit: 7,
		Topics:    []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 10}},
		State:     &sparktest.State{Partitions: 3, Metadata: true},
		Checksums: true,
		Files:     map[string]string{"sources/0/0": kafkaInitial},
	}
}

func writeCheckpoint(t testing.TB, s sparktest.Spec) string {
	t.Helper()
	dir := t.TempDir()
	if err := sparktest.WriteCheckpoint(dir, s); err != nil {
		t.Fatal(err)
	}
	return dir
}

func open(t testing.TB, location string) storage.Store {
	t.Helper()
	s, err := storage.Open(location, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tree reads every file under dir, by slash path.
func tree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// without returns m less the names given and anything under a removed directory.
func without(m map[string][]byte, names ...string) map[string][]byte {
	out := maps.Clone(m)
	for name := range out {
		for _, n := range names {
			if name == n || strings.HasPrefix(name, n+"/") {
				delete(out, name)
			}
		}
	}
	return out
}

func sameTree(t testing.TB, what string, got, want map[string][]byte) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: %s is missing", what, name)
			continue
		}
		if !bytes.Equal(g, want[name]) {
			t.Errorf("%s: %s differs: %q, want %q", what, name, g, want[name])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected %s", what, name)
		}
	}
}

func backup(t testing.TB, src, root storage.Store, when time.Time) *remediate.BackupResult {
	t.Helper()
	b, err := remediate.Backup(context.Background(), src, root, "sms-replies", when)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	return b
}

func plan(t testing.TB, store storage.Store) *remediate.Plan {
	t.Helper()
	p, err := remediate.PlanRepair(context.Background(), store, now)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

func planPaths(p *remediate.Plan) []string {
	var out []string
	for _, f := range p.Files {
		out = append(out, f.Path)
	}
	return out
}

// tamperStore flips the first byte of one file as it is written: a backup store that corrupts.
type tamperStore struct {
	storage.Store
	suffix string
}

func (s tamperStore) Write(ctx context.Context, name string, r io.Reader) error {
	if !strings.HasSuffix(name, s.suffix) {
		return s.Store.Write(ctx, name, r)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	data[0] ^= 0xff
	return s.Store.Write(ctx, name, bytes.NewReader(data))
}
