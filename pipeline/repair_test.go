package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/pipeline"
)

// repairWorld is a pipeline whose newest offsets file (offsets/4) is empty, with a backup
// location, and the Repairs over it; skew moves the policy's clock (not the files').
type repairWorld struct {
	r        *pipeline.Repairs
	dir      string
	offsets4 string
	skew     atomic.Int64
}

func newRepairWorld(t *testing.T, backups bool) *repairWorld {
	t.Helper()
	base := t.TempDir()
	w := &repairWorld{dir: filepath.Join(base, "cp")}
	w.offsets4 = filepath.Join(w.dir, "offsets", "4")
	if err := sparktest.WriteCheckpoint(w.dir, sparktest.Spec{Start: time.Now().Add(-40 * time.Minute), LatestBatch: 4, LatestCommit: 3,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 2}},
		Files:  map[string]string{"offsets/4": ""}, ModTimes: map[string]time.Time{"offsets/4": time.Now().Add(-30 * time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	location := fmt.Sprintf("    checkpoint: {location: %q}\n", w.dir)
	if backups {
		location = fmt.Sprintf("    checkpoint: {location: %q, backup_location: %q}\n", w.dir, filepath.Join(base, "backups"))
	}
	st, _ := newStore(t)
	w.r = &pipeline.Repairs{Config: parseConfig(t, location, "repair: {confirm_within: 3m, quiet_for: 2m, backup_max_age: 1h}\n"),
		Store: st, Replica: "replica-a", Now: func() time.Time { return time.Now().Add(time.Duration(w.skew.Load())) }}
	return w
}

// TestRepairPolicy: a confirmation carries out the plan it names only when every rule holds,
// and otherwise says which rule refused it, with its evidence, moving nothing.
func TestRepairPolicy(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		backups bool
		// before runs between the dry run and the confirmation; it may change the confirmation.
		before func(t *testing.T, w *repairWorld, c *pipeline.Confirmation)
		// refusal is the rule that refuses ("" when the confirmation goes through); check reads
		// its evidence.
		refusal pipeline.RepairRefusal
		check   func(t *testing.T, re *pipeline.RefusalError, prop *pipeline.Proposal)
	}{
		{"no verified backup", true, nil, pipeline.RefusedNoVerifiedBackup, nil},
		{"a backup older than repair.backup_max_age", true, func(t *testing.T, w *repairWorld, _ *pipeline.Confirmation) {
			backup(t, w)
			w.skew.Store(int64(2 * time.Hour))
		}, pipeline.RefusedOldBackup, func(t *testing.T, re *pipeline.RefusalError, _ *pipeline.Proposal) {
			if re.Limit != time.Hour || re.Age < 2*time.Hour || re.Age > 3*time.Hour {
				t.Errorf("age %s, limit %s; want about 2h over 1h", re.Age, re.Limit)
			}
		}},
		{"a planned file changed", true, func(t *testing.T, w *repairWorld, _ *pipeline.Confirmation) {
			backup(t, w)
			fi, _ := os.Stat(w.offsets4)
			os.WriteFile(w.offsets4, []byte("v1\n{\"bat"), 0o644)
			os.Chtimes(w.offsets4, fi.ModTime(), fi.ModTime())
		}, pipeline.RefusedChanged, func(t *testing.T, re *pipeline.RefusalError, prop *pipeline.Proposal) {
			if re.Plan != prop.ID || re.Digest != prop.Digest || len(re.Changes.Files) != 1 || !grew(re.Changes.Files[0], "offsets/4", 0, 8) {
				t.Errorf("plan %s digest %.12s changes %+v; want plan %s's offsets/4 grown to 8 bytes", re.Plan, re.Digest, re.Changes, prop.ID)
			}
		}},
		{"the query writes", true, func(t *testing.T, w *repairWorld, _ *pipeline.Confirmation) {
			backup(t, w)
			os.WriteFile(filepath.Join(w.dir, "offsets", ".5.9f1c.tmp"), []byte("v1\n"), 0o644)
		}, pipeline.RefusedAlive, func(t *testing.T, re *pipeline.RefusalError, _ *pipeline.Proposal) {
			if re.Kind != pipeline.KindRepair || re.Limit != 2*time.Minute || len(re.Alive) != 1 || re.Alive[0].Kind != pipeline.SignWritten ||
				re.Alive[0].Path != "offsets/.5.9f1c.tmp" || re.Alive[0].Ago < 0 || re.Alive[0].Ago > time.Minute {
				t.Errorf("kind %s, quiet_for %s, signs %+v; want offsets/.5.9f1c.tmp written just now", re.Kind, re.Limit, re.Alive)
			}
		}},
		{"the query writes, forced", true, func(t *testing.T, w *repairWorld, c *pipeline.Confirmation) {
			backup(t, w)
			os.WriteFile(filepath.Join(w.dir, "offsets", ".5.9f1c.tmp"), []byte("v1\n"), 0o644)
			c.Force = "query stopped by hand"
		}, "", nil},
		{"another remediation holds the lock", true, func(t *testing.T, w *repairWorld, _ *pipeline.Confirmation) {
			backup(t, w)
			if ok, err := w.r.Store.TryLock(ctx, "remediate:sms-replies", "checkpoint backup by bob since 10:40:00Z (replica-b #1)", time.Minute); !ok || err != nil {
				t.Fatal("lock", err)
			}
		}, pipeline.RefusedBusy, func(t *testing.T, re *pipeline.RefusalError, _ *pipeline.Proposal) {
			if re.Holder != "checkpoint backup by bob since 10:40:00Z" {
				t.Errorf("holder %q", re.Holder)
			}
		}},
		{"the plan of another kind", true, func(t *testing.T, w *repairWorld, c *pipeline.Confirmation) {
			backup(t, w)
			c.Kind = pipeline.KindRestore
		}, pipeline.RefusedOtherPlan, func(t *testing.T, re *pipeline.RefusalError, _ *pipeline.Proposal) {
			if re.PlanKind != pipeline.KindRepair || re.PlanPipeline != "sms-replies" || re.Kind != pipeline.KindRestore {
				t.Errorf("plan of a %s of %s, asked a %s", re.PlanKind, re.PlanPipeline, re.Kind)
			}
		}},
		{"an unknown plan", true, func(t *testing.T, w *repairWorld, c *pipeline.Confirmation) {
			backup(t, w)
			c.Plan = "P-999"
		}, pipeline.RefusedUnknownPlan, func(t *testing.T, re *pipeline.RefusalError, _ *pipeline.Proposal) {
			if re.Plan != "P-999" || re.Limit != 3*time.Minute {
				t.Errorf("plan %s, confirm_within %s", re.Plan, re.Limit)
			}
		}},
		{"every rule holds", true, func(t *testing.T, w *repairWorld, _ *pipeline.Confirmation) { backup(t, w) }, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newRepairWorld(t, c.backups)
			prop, err := w.r.Propose(ctx, pipeline.KindRepair, "sms-replies", "", "alice")
			if err != nil {
				t.Fatal(err)
			}
			if prop.ID == "" || prop.Files != 1 || len(prop.Alive) != 0 {
				t.Fatalf("dry run %+v, want a plan of one file and no sign of a running query", prop)
			}
			conf := pipeline.Confirmation{Kind: pipeline.KindRepair, Pipeline: "sms-replies", Plan: prop.ID, Actor: "alice"}
			if c.before != nil {
				c.before(t, w, &conf)
			}
			out, err := w.r.Confirm(ctx, conf)
			var re *pipeline.RefusalError
			if c.refusal != "" {
				if !errors.As(err, &re) || re.Code != c.refusal || re.Pipeline != "sms-replies" {
					t.Fatalf("confirm: %v, want a refusal %s of sms-replies", err, c.refusal)
				}
				if c.check != nil {
					c.check(t, re, prop)
				}
				if _, err := os.Stat(w.offsets4); err != nil {
					t.Fatalf("a refused repair moved offsets/4: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != pipeline.KindRepair || out.Pipeline != "sms-replies" || out.Plan != prop.ID || len(out.Files) != 1 || out.Files[0] != "offsets/4" ||
				!strings.HasPrefix(out.Quarantine, filepath.Join(filepath.Dir(w.dir), "backups")) || out.Backup == "" {
				t.Fatalf("outcome %+v", out)
			}
			if conf.Force != "" && (len(out.Forced) != 1 || out.Forced[0].Path != "offsets/.5.9f1c.tmp") {
				t.Fatalf("a forced repair names %+v as what it overrode, want the write of offsets/.5.9f1c.tmp", out.Forced)
			}
			if _, err := os.Stat(w.offsets4); !os.IsNotExist(err) {
				t.Fatalf("offsets/4 after the repair: %v", err)
			}
			if _, err := w.r.Confirm(ctx, conf); !errors.As(err, &re) || re.Code != pipeline.RefusedUnknownPlan {
				t.Fatalf("the plan was carried out twice: %v", err)
			}
			// The query is stopped for good; the restore puts back exactly what was quarantined.
			os.Remove(filepath.Join(w.dir, "offsets", ".5.9f1c.tmp"))
			rp, err := w.r.Propose(ctx, pipeline.KindRestore, "sms-replies", "", "alice")
			if err != nil || rp.Files != 1 {
				t.Fatalf("restore dry run %+v %v", rp, err)
			}
			back, err := w.r.Confirm(ctx, pipeline.Confirmation{Kind: pipeline.KindRestore, Pipeline: "sms-replies", Plan: rp.ID, Actor: "alice"})
			if err != nil || len(back.Files) != 1 || back.Kind != pipeline.KindRestore || back.Plan != rp.ID || back.From == "" {
				t.Fatalf("restore %+v %v", back, err)
			}
			if b, err := os.ReadFile(w.offsets4); err != nil || len(b) != 0 {
				t.Fatalf("offsets/4 after the restore: %q %v", b, err)
			}
		})
	}
}

// TestRepairWithoutBackupLocation: no backup location, no backup and no repair.
func TestRepairWithoutBackupLocation(t *testing.T) {
	w := newRepairWorld(t, false)
	_, err := w.r.Backup(context.Background(), "sms-replies", "alice")
	var re *pipeline.RefusalError
	if !errors.As(err, &re) || re.Code != pipeline.RefusedNoBackupLocation || re.Pipeline != "sms-replies" {
		t.Fatalf("backup without a location: %v", err)
	}
	if _, err := w.r.Backup(context.Background(), "nope", "alice"); err == nil || !strings.Contains(err.Error(), `unknown pipeline "nope"`) {
		t.Fatalf("backup of an unknown pipeline: %v", err)
	}
}

func backup(t *testing.T, w *repairWorld) {
	t.Helper()
	if _, err := w.r.Backup(context.Background(), "sms-replies", "alice"); err != nil {
		t.Fatal(err)
	}
}

// grew says c is file path's size changed from was to now bytes.
func grew(c remediate.FileChange, path string, was, now int64) bool {
	return c.Path == path && c.Code == remediate.ChangeModified && slices.Contains(c.Changed, remediate.FieldSize) &&
		c.Was.Size == was && c.Now.Size == now
}

// TestConfirmAPlanAnEarlierVersionStored: a dry run stored by the version before plans held
// codes (a file's Kind, Reason and the plan's Notes in words, a restore's VerifiedBy and
// Problems in words) is still carried out, and still refused when the checkpoint changed since.
func TestConfirmAPlanAnEarlierVersionStored(t *testing.T) {
	ctx := context.Background()
	// earlier rewrites stored plan id as the earlier version wrote it.
	earlier := func(t *testing.T, w *repairWorld, id string) {
		t.Helper()
		data, err := w.r.Store.Plan(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var sp map[string]any
		if err := json.Unmarshal(data, &sp); err != nil {
			t.Fatal(err)
		}
		if p, ok := sp["repair"].(map[string]any); ok {
			for _, f := range p["Files"].([]any) {
				f := f.(map[string]any)
				for _, k := range []string{"Cause", "Batch", "Target", "Age", "Damage"} {
					delete(f, k)
				}
				f["Kind"], f["Reason"] = "corrupt offsets", "offsets/4 is empty: Spark cannot parse it on restart; without it Spark plans batch 4 again"
			}
			delete(p, "Remarks")
			p["Notes"] = []string{"after the move Spark restarts after batch 3, the latest commit, and plans batch 4"}
		}
		if p, ok := sp["restore"].(map[string]any); ok {
			for _, f := range p["Files"].([]any) {
				f.(map[string]any)["VerifiedBy"] = "quarantine record"
			}
			delete(p, "Stays")
			p["Problems"] = nil
		} else if _, ok := sp["repair"]; !ok {
			t.Fatalf("stored plan %s holds no plan: %s", id, data)
		}
		if data, err = json.Marshal(sp); err != nil {
			t.Fatal(err)
		}
		if err := w.r.Store.SavePlan(ctx, id, data, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	// dryRun proposes a plan of kind and stores it as the earlier version would have.
	dryRun := func(t *testing.T, w *repairWorld, kind pipeline.Kind) *pipeline.Proposal {
		t.Helper()
		prop, err := w.r.Propose(ctx, kind, "sms-replies", "", "alice")
		if err != nil || prop.ID == "" {
			t.Fatalf("%s dry run %+v %v", kind, prop, err)
		}
		earlier(t, w, prop.ID)
		return prop
	}
	t.Run("unchanged", func(t *testing.T) {
		w := newRepairWorld(t, true)
		backup(t, w)
		prop := dryRun(t, w, pipeline.KindRepair)
		out, err := w.r.Confirm(ctx, pipeline.Confirmation{Kind: pipeline.KindRepair, Pipeline: "sms-replies", Plan: prop.ID, Actor: "alice"})
		if err != nil || len(out.Files) != 1 || out.Files[0] != "offsets/4" {
			t.Fatalf("repair of an earlier version's plan: %+v %v", out, err)
		}
		rp := dryRun(t, w, pipeline.KindRestore)
		back, err := w.r.Confirm(ctx, pipeline.Confirmation{Kind: pipeline.KindRestore, Pipeline: "sms-replies", Plan: rp.ID, Actor: "alice"})
		if err != nil || len(back.Files) != 1 || back.Files[0] != "offsets/4" {
			t.Fatalf("restore of an earlier version's plan: %+v %v", back, err)
		}
	})
	t.Run("changed since", func(t *testing.T) {
		w := newRepairWorld(t, true)
		backup(t, w)
		prop := dryRun(t, w, pipeline.KindRepair)
		fi, _ := os.Stat(w.offsets4)
		os.WriteFile(w.offsets4, []byte("v1\n{\"bat"), 0o644)
		os.Chtimes(w.offsets4, fi.ModTime(), fi.ModTime())
		_, err := w.r.Confirm(ctx, pipeline.Confirmation{Kind: pipeline.KindRepair, Pipeline: "sms-replies", Plan: prop.ID, Actor: "alice"})
		var re *pipeline.RefusalError
		if !errors.As(err, &re) || re.Code != pipeline.RefusedChanged || re.Digest != prop.Digest ||
			len(re.Changes.Files) != 1 || !grew(re.Changes.Files[0], "offsets/4", 0, 8) {
			t.Fatalf("confirm: %v (changes %+v), want plan %s refused for offsets/4 grown to 8 bytes", err, re, prop.ID)
		}
	})
}
