package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// PlanStore keeps dry runs as plans until they are confirmed or expire, the per-pipeline
// remediation lock, and the newest probe (state.Store).
type PlanStore interface {
	LastProbes
	NewPlanID(ctx context.Context) (string, error)
	SavePlan(ctx context.Context, id string, plan []byte, ttl time.Duration) error
	Plan(ctx context.Context, id string) ([]byte, error)
	DeletePlan(ctx context.Context, id string) error
	TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	RefreshLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	Unlock(ctx context.Context, name, owner string) error
	LockHolder(ctx context.Context, name string) (string, error)
}

// Repairs backs up, repairs and restores checkpoints over the configured locations
// (commands.Remediation). It holds the repair policy: a verified backup younger than
// repair.backup_max_age; a confirmation carries out the stored plan it names, unchanged,
// within repair.confirm_within; nothing while the query looks alive (repair.quiet_for) unless
// forced; one backup, repair or restore at a time per pipeline, across replicas.
type Repairs struct {
	Config  *config.Config
	Getenv  func(string) string
	Now     func() time.Time
	Store   PlanStore
	Replica string // names this process in the lock, for whoever finds it taken
}

// Kind is a repair or a restore.
type Kind string

// The kinds of plans.
const (
	KindRepair  Kind = "repair"
	KindRestore Kind = "restore"
)

// Proposal is a dry run as shown to the person who asked.
type Proposal struct {
	ID       string // "" when there is nothing to do
	Pipeline string
	Files    int
	Digest   string
	Expires  time.Time
	Repair   *remediate.Plan        // KindRepair: the plan
	Restore  *remediate.RestorePlan // KindRestore: the plan
	Warnings []string               // what would make a confirmation refused now (the query looks alive)
	Backup   string                 // restore: the backup the files come from
}

// Confirmation is a click on a dry run's button, or the command it stands for.
type Confirmation struct {
	Kind     Kind
	Pipeline string
	Plan     string
	Actor    string
	Force    string // the reason given with --force; "" without
}

// Outcome is what a confirmation did.
type Outcome struct {
	Text   string   // one sentence for the reply and the thread
	Files  []string // the files moved or put back
	Forced []string // the evidence --force overrode
}

// RefusalError is a remediation refused by a safety rule; Reason says which, Details show
// the evidence (files that changed, writes that make the query look alive).
type RefusalError struct {
	Reason  string
	Details []string
}

func (e *RefusalError) Error() string { return e.Reason }

// storedPlan is a dry run as it was shown, kept in Redis (state.SavePlan) until it is
// confirmed or expires.
type storedPlan struct {
	ID       string                 `json:"id"`
	Kind     Kind                   `json:"kind"`
	Pipeline string                 `json:"pipeline"`
	Location string                 `json:"location"`
	At       time.Time              `json:"at"`
	Expires  time.Time              `json:"expires"`
	By       string                 `json:"by"`
	Files    []remediate.FileState  `json:"files"`
	Digest   string                 `json:"digest"`
	Repair   *remediate.Plan        `json:"repair,omitempty"`
	Restore  *remediate.RestorePlan `json:"restore,omitempty"`
}

func (r *Repairs) source(pipeline string) (*config.Pipeline, storage.Store, error) {
	p, ok := r.Config.Pipeline(pipeline)
	if !ok {
		return nil, nil, fmt.Errorf("unknown pipeline %q", pipeline)
	}
	if p.Checkpoint.Location == "" {
		return nil, nil, fmt.Errorf("pipeline %s has no checkpoint.location", pipeline)
	}
	src, err := storage.Open(p.Checkpoint.Location, StorageOptions(r.Config, r.Getenv))
	if err != nil {
		return nil, nil, err
	}
	return p, src, nil
}

func (r *Repairs) stores(pipeline string) (*config.Pipeline, storage.Store, storage.Store, error) {
	p, src, err := r.source(pipeline)
	if err != nil {
		return nil, nil, nil, err
	}
	if p.Checkpoint.BackupLocation == "" {
		return p, src, nil, &RefusalError{Reason: "pipelines[" + pipeline + "].checkpoint.backup_location is not set: no backup, no repair"}
	}
	dst, err := storage.Open(p.Checkpoint.BackupLocation, StorageOptions(r.Config, r.Getenv))
	if err != nil {
		return nil, nil, nil, err
	}
	return p, src, dst, nil
}

// exclusive runs f while holding the pipeline's remediation lock in Redis: one backup, repair
// or restore at a time per pipeline. The lock lives a minute and is renewed while f runs, so
// a replica that dies mid-way frees it soon.
func (r *Repairs) exclusive(ctx context.Context, pipeline, what, actor string, f func(ctx context.Context) error) error {
	const ttl = time.Minute
	name := "remediate:" + pipeline
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	owner := fmt.Sprintf("%s by %s since %s (%s #%s)", what, actor, human.Clock(r.Now()), r.Replica, hex.EncodeToString(nonce))
	ok, err := r.Store.TryLock(ctx, name, owner, ttl)
	if err != nil {
		return err
	}
	if !ok {
		holder, _ := r.Store.LockHolder(ctx, name)
		if i := strings.Index(holder, " ("); i > 0 {
			holder = holder[:i]
		}
		return &RefusalError{Reason: fmt.Sprintf("another remediation of %s is running (%s); one at a time per pipeline: try again when it is done", pipeline, holder)}
	}
	defer func() { _ = r.Store.Unlock(context.WithoutCancel(ctx), name, owner) }()
	done := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_, _ = r.Store.RefreshLock(ctx, name, owner, ttl)
			}
		}
	}()
	defer func() { close(done); <-renewed }()
	return f(ctx)
}

func (r *Repairs) Backup(ctx context.Context, pipeline, actor string) (*remediate.BackupResult, error) {
	_, src, dst, err := r.stores(pipeline)
	if err != nil {
		return nil, err
	}
	var res *remediate.BackupResult
	err = r.exclusive(ctx, pipeline, "checkpoint backup", actor, func(ctx context.Context) error {
		res, err = remediate.Backup(ctx, src, dst, pipeline, r.Now())
		return err
	})
	return res, err
}

func (r *Repairs) Backups(ctx context.Context, pipeline string) ([]remediate.BackupInfo, error) {
	_, _, dst, err := r.stores(pipeline)
	if err != nil {
		return nil, err
	}
	return remediate.ListBackups(ctx, dst, pipeline)
}

// Propose makes the dry run of a repair or a restore and stores it as a plan.
func (r *Repairs) Propose(ctx context.Context, kind Kind, pipeline, backup, actor string) (*Proposal, error) {
	p, src, err := r.source(pipeline)
	if err != nil {
		return nil, err
	}
	now := r.Now()
	sp := &storedPlan{Kind: kind, Pipeline: pipeline, Location: src.Location(), At: now, By: actor,
		Expires: now.Add(r.Config.Repair.ConfirmWithin)}
	prop := &Proposal{Pipeline: pipeline}
	switch kind {
	case KindRepair:
		plan, err := remediate.PlanRepair(ctx, src, now)
		if err != nil {
			return nil, err
		}
		prop.Repair = plan
		if plan.Empty {
			return prop, nil
		}
		for _, f := range plan.Files {
			st, err := remediate.Observe(ctx, src, f.Path, false)
			if err != nil {
				return nil, err
			}
			if st.Absent || st.Size != f.Size {
				return nil, fmt.Errorf("%s changed while it was planned (is the query running?); run the dry run again", f.Path)
			}
			st.SHA256 = f.SHA256
			sp.Files = append(sp.Files, st)
		}
		sp.Repair = plan
	case KindRestore:
		_, _, dst, err := r.stores(pipeline)
		if err != nil {
			return nil, err
		}
		dir, err := r.restoreSource(ctx, dst, pipeline, backup)
		if err != nil {
			return nil, err
		}
		rp, err := remediate.PlanRestore(ctx, src, dst, dir)
		if err != nil {
			return nil, err
		}
		prop.Restore, prop.Backup = rp, dir
		if len(rp.Files) == 0 {
			return prop, nil
		}
		sp.Files, sp.Restore = rp.States(), rp
	}
	if sp.ID, err = r.Store.NewPlanID(ctx); err != nil {
		return nil, err
	}
	sp.Digest = remediate.Digest(sp.Files)
	data, err := json.Marshal(sp)
	if err != nil {
		return nil, err
	}
	if err := r.Store.SavePlan(ctx, sp.ID, data, r.Config.Repair.ConfirmWithin); err != nil {
		return nil, err
	}
	prop.ID, prop.Files, prop.Digest, prop.Expires = sp.ID, len(sp.Files), sp.Digest, sp.Expires
	if kind == KindRestore {
		prop.Files = len(sp.Restore.Files)
	}
	if alive, err := r.alive(ctx, p, src); err == nil && len(alive) > 0 {
		prop.Warnings = append(alive, stopAdvice(r.Config.Repair.QuietFor)...)
	}
	return prop, nil
}

var backupName = regexp.MustCompile(`^\d{8}T\d{6}Z(-\d+)?$`)

// restoreSource is the backup a restore takes files from: the one named, else the newest
// backup of the pipeline that holds quarantined files.
func (r *Repairs) restoreSource(ctx context.Context, dst storage.Store, pipeline, backup string) (string, error) {
	list, err := remediate.ListBackups(ctx, dst, pipeline)
	if err != nil {
		return "", err
	}
	if backup != "" {
		backup = strings.TrimPrefix(backup, pipeline+"/")
		if !backupName.MatchString(backup) {
			return "", &RefusalError{Reason: fmt.Sprintf("%q is not a backup name such as 20261130T104105Z: see `checkpoint backups %s`", backup, pipeline)}
		}
		for _, b := range list {
			if b.Dir == pipeline+"/"+backup {
				return b.Dir, nil
			}
		}
		return "", &RefusalError{Reason: fmt.Sprintf("%s has no backup %s: see `checkpoint backups %s`", pipeline, backup, pipeline)}
	}
	for _, b := range list {
		if b.Quarantined > 0 {
			return b.Dir, nil
		}
	}
	return "", &RefusalError{Reason: fmt.Sprintf("no backup of %s holds quarantined files: there is nothing to restore", pipeline)}
}

// alive lists the signs, within repair.quiet_for, that the query is running: a checkpoint
// commit or offsets file, a commit the newest probe saw, a driver-log write.
func (r *Repairs) alive(ctx context.Context, p *config.Pipeline, src storage.Store) ([]string, error) {
	quiet := r.Config.Repair.QuietFor
	if quiet <= 0 {
		return nil, nil
	}
	now := r.Now()
	since := now.Add(-quiet)
	ago := func(t time.Time) string {
		return fmt.Sprintf("%s ago (%s)", now.Sub(t).Round(time.Second), human.Clock(t))
	}
	var out []string
	acts, err := remediate.RecentActivity(ctx, src, since)
	if err != nil {
		return nil, err
	}
	for _, a := range acts {
		out = append(out, fmt.Sprintf("%s was written %s", a.Path, ago(a.At)))
	}
	if last, err := r.Store.LastProbe(ctx, p.Name); err == nil && len(last.Last.Result) > 0 {
		var res probe.Result
		if json.Unmarshal(last.Last.Result, &res) == nil && res.NewestCommit.After(since) {
			out = append(out, fmt.Sprintf("the probe of %s saw a commit written %s", human.Clock(res.Started), ago(res.NewestCommit)))
		}
	}
	if len(p.Logs.Paths) > 0 {
		opts := StorageOptions(r.Config, r.Getenv)
		name, at, err := driverlog.LastWriteIn(ctx, p.Logs.Paths, &opts)
		if err == nil && at.After(since) {
			out = append(out, fmt.Sprintf("the driver log %s was written %s", name, ago(at)))
		}
	}
	return out, nil
}

func stopAdvice(quiet time.Duration) []string {
	return []string{
		"Stop the query first: query.stop() in the driver, or stop the job (spark-submit --kill, yarn application -kill, kubectl delete sparkapplication).",
		fmt.Sprintf("Then wait until nothing is written for %s (repair.quiet_for) and confirm again; `--force REASON` (remediators, audited) overrides.", quiet),
	}
}

// Confirm carries out a stored plan, under the pipeline's lock, after every check.
func (r *Repairs) Confirm(ctx context.Context, c Confirmation) (*Outcome, error) {
	var out *Outcome
	err := r.exclusive(ctx, c.Pipeline, "checkpoint "+string(c.Kind), c.Actor, func(ctx context.Context) error {
		var err error
		out, err = r.confirm(ctx, c)
		return err
	})
	return out, err
}

func (r *Repairs) confirm(ctx context.Context, c Confirmation) (*Outcome, error) {
	again := fmt.Sprintf("run `checkpoint %s %s` again", c.Kind, c.Pipeline)
	data, err := r.Store.Plan(ctx, c.Plan)
	if errors.Is(err, state.ErrNotFound) {
		return nil, &RefusalError{Reason: fmt.Sprintf("plan %s is unknown, expired (plans last %s, repair.confirm_within) or already carried out: %s",
			c.Plan, r.Config.Repair.ConfirmWithin, again)}
	}
	if err != nil {
		return nil, err
	}
	var sp storedPlan
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("read plan %s: %w", c.Plan, err)
	}
	if sp.Pipeline != c.Pipeline || sp.Kind != c.Kind {
		return nil, &RefusalError{Reason: fmt.Sprintf("plan %s is a %s of %s, not a %s of %s", c.Plan, sp.Kind, sp.Pipeline, c.Kind, c.Pipeline)}
	}
	p, src, dst, err := r.stores(c.Pipeline)
	if err != nil {
		return nil, err
	}
	if src.Location() != sp.Location {
		return nil, &RefusalError{Reason: fmt.Sprintf("plan %s was made for %s; the checkpoint is now %s: %s", c.Plan, sp.Location, src.Location(), again)}
	}
	out := &Outcome{}
	alive, err := r.alive(ctx, p, src)
	if err != nil {
		return nil, err
	}
	if len(alive) > 0 {
		if c.Force == "" {
			return nil, &RefusalError{
				Reason:  fmt.Sprintf("%s looks alive: a checkpoint %s now could break the running query; nothing was changed", c.Pipeline, c.Kind),
				Details: append(append([]string{"Seen within " + r.Config.Repair.QuietFor.String() + " (repair.quiet_for):"}, alive...), stopAdvice(r.Config.Repair.QuietFor)...)}
		}
		out.Forced = alive
	}
	now := r.Now()
	switch c.Kind {
	case KindRepair:
		b, err := remediate.LatestBackup(ctx, dst, c.Pipeline)
		if err != nil {
			return nil, err
		}
		if b == nil || !b.Verified {
			return nil, &RefusalError{Reason: "no verified backup of " + c.Pipeline + ": run `checkpoint backup " + c.Pipeline + "` first"}
		}
		if age := now.Sub(b.Manifest.Created); age > r.Config.Repair.BackupMaxAge {
			return nil, &RefusalError{Reason: fmt.Sprintf("the newest verified backup of %s is %s old, older than repair.backup_max_age (%s): back up again first",
				c.Pipeline, age.Round(time.Second), r.Config.Repair.BackupMaxAge)}
		}
		if diff, err := r.repairChanges(ctx, src, &sp, now); err != nil {
			return nil, err
		} else if len(diff) > 0 {
			_ = r.Store.DeletePlan(ctx, sp.ID)
			return nil, &RefusalError{
				Reason:  fmt.Sprintf("the checkpoint of %s changed since dry run %s (digest %.12s): nothing was moved; %s and look at the new plan", c.Pipeline, sp.ID, sp.Digest, again),
				Details: diff}
		}
		q, err := remediate.Quarantine(ctx, src, dst, b, sp.Repair)
		if q != nil {
			for _, f := range q.Moved {
				out.Files = append(out.Files, f.Path)
			}
		}
		_ = r.Store.DeletePlan(ctx, sp.ID)
		if err != nil {
			return nil, err
		}
		out.Text = fmt.Sprintf("Quarantined %d file(s) of %s into %s (plan %s): %s. Backup %s was verified before the move.",
			len(out.Files), c.Pipeline, q.Destination, sp.ID, strings.Join(out.Files, ", "), b.Location)
	case KindRestore:
		var now2 []remediate.FileState
		for _, f := range sp.Restore.Files {
			s, err := remediate.Observe(ctx, dst, f.Source.Path, true)
			if err != nil {
				return nil, err
			}
			t, err := remediate.Observe(ctx, src, f.Path, false)
			if err != nil {
				return nil, err
			}
			now2 = append(now2, s, t)
		}
		if diff := remediate.Diff(sp.Files, now2); len(diff) > 0 {
			_ = r.Store.DeletePlan(ctx, sp.ID)
			return nil, &RefusalError{
				Reason:  fmt.Sprintf("the quarantine or the checkpoint of %s changed since dry run %s (digest %.12s): nothing was put back; %s", c.Pipeline, sp.ID, sp.Digest, again),
				Details: diff}
		}
		res, err := remediate.Restore(ctx, src, dst, sp.Restore, now)
		if res != nil {
			out.Files = res.Restored
		}
		_ = r.Store.DeletePlan(ctx, sp.ID)
		if err != nil {
			return nil, err
		}
		out.Text = fmt.Sprintf("Restored %d file(s) of %s from %s (plan %s), each verified against the quarantine's manifest: %s.",
			len(out.Files), c.Pipeline, res.From, sp.ID, strings.Join(out.Files, ", "))
	}
	return out, nil
}

// repairChanges re-reads the plan's files and plans again: every difference from what the dry
// run showed, one sentence each.
func (r *Repairs) repairChanges(ctx context.Context, src storage.Store, sp *storedPlan, now time.Time) ([]string, error) {
	var seen []remediate.FileState
	for _, f := range sp.Files {
		st, err := remediate.Observe(ctx, src, f.Path, true)
		if err != nil {
			return nil, err
		}
		seen = append(seen, st)
	}
	diff := remediate.Diff(sp.Files, seen)
	fresh, err := remediate.PlanRepair(ctx, src, now)
	if err != nil {
		return nil, err
	}
	shown := map[string]bool{}
	for _, f := range sp.Files {
		shown[f.Path] = true
	}
	planned := map[string]bool{}
	for _, f := range fresh.Files {
		planned[f.Path] = true
		if !shown[f.Path] {
			diff = append(diff, f.Path+": not in the plan that was shown, the checkpoint now needs it moved too ("+f.Reason+")")
		}
	}
	for _, f := range sp.Files {
		if !planned[f.Path] {
			diff = append(diff, f.Path+": in the plan that was shown, no longer one to move")
		}
	}
	return diff, nil
}
