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
	Backup   string                 // restore: the backup the files come from
	// Alive are the signs that the query runs, which would make a confirmation refused now;
	// QuietFor is repair.quiet_for, how long nothing must be written.
	Alive    []AliveSign
	QuietFor time.Duration
}

// Confirmation is a click on a dry run's button, or the command it stands for.
type Confirmation struct {
	Kind     Kind
	Pipeline string
	Plan     string
	Actor    string
	Force    string // the reason given with --force; "" without
}

// Outcome is what a confirmation did: commands words it.
type Outcome struct {
	Kind     Kind
	Pipeline string
	Plan     string
	Files    []string    // the files moved or put back
	Forced   []AliveSign // the evidence --force overrode
	// A repair: the quarantine the files went into, and the backup verified before the move.
	Quarantine, Backup string
	// A restore: the quarantine the files came from.
	From string
}

// AliveSignKind says what made the query look alive.
type AliveSignKind string

// The signs that the query runs, within repair.quiet_for.
const (
	// SignWritten: the checkpoint's file Path was written At.
	SignWritten AliveSignKind = "written"
	// SignProbeCommit: the newest probe, started Probed, saw a commit written At.
	SignProbeCommit AliveSignKind = "probe_commit"
	// SignDriverLog: the driver log Path was written At.
	SignDriverLog AliveSignKind = "driver_log"
)

// AliveSign is one sign, within repair.quiet_for, that the query is running.
type AliveSign struct {
	Kind   AliveSignKind
	Path   string
	At     time.Time
	Ago    time.Duration // how long before the judgment At was
	Probed time.Time
}

// RepairRefusal says which safety rule refused a remediation.
type RepairRefusal string

// The refusals. Each names the fields of RefusalError it uses besides Code and Pipeline.
const (
	// RefusedNoBackupLocation: the pipeline has no checkpoint.backup_location: no backup, no
	// repair.
	RefusedNoBackupLocation RepairRefusal = "no_backup_location"
	// RefusedBusy: another remediation of the pipeline holds its lock (Holder).
	RefusedBusy RepairRefusal = "busy"
	// RefusedBackupName: Backup is not a backup's name.
	RefusedBackupName RepairRefusal = "backup_name"
	// RefusedNoSuchBackup: the pipeline has no backup Backup.
	RefusedNoSuchBackup RepairRefusal = "no_such_backup"
	// RefusedNothingQuarantined: no backup of the pipeline holds quarantined files.
	RefusedNothingQuarantined RepairRefusal = "nothing_quarantined"
	// RefusedUnknownPlan: Plan is unknown, expired (Limit: repair.confirm_within) or already
	// carried out (Kind).
	RefusedUnknownPlan RepairRefusal = "unknown_plan"
	// RefusedOtherPlan: Plan is a PlanKind of PlanPipeline, not a Kind of the pipeline.
	RefusedOtherPlan RepairRefusal = "other_plan"
	// RefusedMoved: Plan was made for the checkpoint at PlanLocation; it is now at Location
	// (Kind).
	RefusedMoved RepairRefusal = "moved"
	// RefusedAlive: the query looks alive (Kind, Alive; Limit: repair.quiet_for); nothing was
	// changed.
	RefusedAlive RepairRefusal = "alive"
	// RefusedNoVerifiedBackup: the pipeline has no verified backup.
	RefusedNoVerifiedBackup RepairRefusal = "no_verified_backup"
	// RefusedOldBackup: the newest verified backup is Age old, older than Limit
	// (repair.backup_max_age).
	RefusedOldBackup RepairRefusal = "old_backup"
	// RefusedChanged: the checkpoint (a repair), or the quarantine or the checkpoint (a
	// restore), changed since dry run Plan with digest Digest (Kind, Changes); nothing was
	// moved.
	RefusedChanged RepairRefusal = "changed"
)

// RefusalError is a remediation refused by a safety rule, with its evidence: commands words
// it. Code says which rule; the fields each code uses are listed with it.
type RefusalError struct {
	Code     RepairRefusal
	Pipeline string
	Kind     Kind
	Plan     string
	Backup   string
	// Holder is the lock's owner as it recorded itself: "checkpoint backup by bob since
	// 10:40:00Z".
	Holder string
	// The stored plan: its kind, pipeline and checkpoint; Location is the checkpoint's now.
	PlanKind               Kind
	PlanPipeline           string
	PlanLocation, Location string
	Digest                 string
	Age, Limit             time.Duration
	Alive                  []AliveSign
	Changes                PlanChanges
}

// Error is the refusal's code and pipeline, for logs: commands words it.
func (e *RefusalError) Error() string { return "refused " + string(e.Code) + ": " + e.Pipeline }

// PlanChanges are the differences between a dry run and what a confirmation finds.
type PlanChanges struct {
	// Files are the files that changed (remediate.Diff).
	Files []remediate.FileChange
	// Added are files the checkpoint now needs moved that the plan shown did not hold;
	// Dropped files the plan held that no longer need moving (a repair).
	Added   []remediate.PlanFile
	Dropped []string
}

// Empty says nothing changed.
func (c PlanChanges) Empty() bool {
	return len(c.Files) == 0 && len(c.Added) == 0 && len(c.Dropped) == 0
}

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
		return p, src, nil, &RefusalError{Code: RefusedNoBackupLocation, Pipeline: pipeline}
	}
	dst, err := storage.Open(p.Checkpoint.BackupLocation, StorageOptions(r.Config, r.Getenv))
	if err != nil {
		return nil, nil, nil, err
	}
	return p, src, dst, nil
}

// exclusive runs f, a checkpoint backup, repair or restore (op), while holding the pipeline's
// remediation lock in Redis: one at a time per pipeline. The lock lives a minute and is
// renewed while f runs, so a replica that dies mid-way frees it soon. Its owner names the
// operation, who asked, since when and the replica; a replica that finds the lock taken shows
// the part before " (" (RefusalError.Holder), so the shape holds across versions.
func (r *Repairs) exclusive(ctx context.Context, pipeline, op, actor string, f func(ctx context.Context) error) error {
	const ttl = time.Minute
	name := "remediate:" + pipeline
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	owner := fmt.Sprintf("checkpoint %s by %s since %s (%s #%s)", op, actor, human.Clock(r.Now()), r.Replica, hex.EncodeToString(nonce))
	ok, err := r.Store.TryLock(ctx, name, owner, ttl)
	if err != nil {
		return err
	}
	if !ok {
		holder, _ := r.Store.LockHolder(ctx, name)
		if i := strings.Index(holder, " ("); i > 0 {
			holder = holder[:i]
		}
		return &RefusalError{Code: RefusedBusy, Pipeline: pipeline, Holder: holder}
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
	err = r.exclusive(ctx, pipeline, "backup", actor, func(ctx context.Context) error {
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
		prop.Alive, prop.QuietFor = alive, r.Config.Repair.QuietFor
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
			return "", &RefusalError{Code: RefusedBackupName, Pipeline: pipeline, Backup: backup}
		}
		for _, b := range list {
			if b.Dir == pipeline+"/"+backup {
				return b.Dir, nil
			}
		}
		return "", &RefusalError{Code: RefusedNoSuchBackup, Pipeline: pipeline, Backup: backup}
	}
	for _, b := range list {
		if b.Quarantined > 0 {
			return b.Dir, nil
		}
	}
	return "", &RefusalError{Code: RefusedNothingQuarantined, Pipeline: pipeline}
}

// alive lists the signs, within repair.quiet_for, that the query is running: a checkpoint
// commit or offsets file, a commit the newest probe saw, a driver-log write.
func (r *Repairs) alive(ctx context.Context, p *config.Pipeline, src storage.Store) ([]AliveSign, error) {
	quiet := r.Config.Repair.QuietFor
	if quiet <= 0 {
		return nil, nil
	}
	now := r.Now()
	since := now.Add(-quiet)
	sign := func(kind AliveSignKind, path string, at time.Time) AliveSign {
		return AliveSign{Kind: kind, Path: path, At: at, Ago: now.Sub(at)}
	}
	var out []AliveSign
	acts, err := remediate.RecentActivity(ctx, src, since)
	if err != nil {
		return nil, err
	}
	for _, a := range acts {
		out = append(out, sign(SignWritten, a.Path, a.At))
	}
	if last, err := r.Store.LastProbe(ctx, p.Name); err == nil && len(last.Last.Result) > 0 {
		var res probe.Result
		if json.Unmarshal(last.Last.Result, &res) == nil && res.NewestCommit.After(since) {
			s := sign(SignProbeCommit, "", res.NewestCommit)
			s.Probed = res.Started
			out = append(out, s)
		}
	}
	if len(p.Logs.Paths) > 0 {
		opts := StorageOptions(r.Config, r.Getenv)
		name, at, err := driverlog.LastWriteIn(ctx, p.Logs.Paths, &opts)
		if err == nil && at.After(since) {
			out = append(out, sign(SignDriverLog, name, at))
		}
	}
	return out, nil
}

// Confirm carries out a stored plan, under the pipeline's lock, after every check.
func (r *Repairs) Confirm(ctx context.Context, c Confirmation) (*Outcome, error) {
	var out *Outcome
	err := r.exclusive(ctx, c.Pipeline, string(c.Kind), c.Actor, func(ctx context.Context) error {
		var err error
		out, err = r.confirm(ctx, c)
		return err
	})
	return out, err
}

func (r *Repairs) confirm(ctx context.Context, c Confirmation) (*Outcome, error) {
	refusal := func(code RepairRefusal) *RefusalError {
		return &RefusalError{Code: code, Pipeline: c.Pipeline, Kind: c.Kind, Plan: c.Plan}
	}
	data, err := r.Store.Plan(ctx, c.Plan)
	if errors.Is(err, state.ErrNotFound) {
		re := refusal(RefusedUnknownPlan)
		re.Limit = r.Config.Repair.ConfirmWithin
		return nil, re
	}
	if err != nil {
		return nil, err
	}
	var sp storedPlan
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("read plan %s: %w", c.Plan, err)
	}
	if sp.Pipeline != c.Pipeline || sp.Kind != c.Kind {
		re := refusal(RefusedOtherPlan)
		re.PlanKind, re.PlanPipeline = sp.Kind, sp.Pipeline
		return nil, re
	}
	p, src, dst, err := r.stores(c.Pipeline)
	if err != nil {
		return nil, err
	}
	if src.Location() != sp.Location {
		re := refusal(RefusedMoved)
		re.PlanLocation, re.Location = sp.Location, src.Location()
		return nil, re
	}
	out := &Outcome{Kind: c.Kind, Pipeline: c.Pipeline, Plan: sp.ID}
	alive, err := r.alive(ctx, p, src)
	if err != nil {
		return nil, err
	}
	if len(alive) > 0 {
		if c.Force == "" {
			re := refusal(RefusedAlive)
			re.Alive, re.Limit = alive, r.Config.Repair.QuietFor
			return nil, re
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
			return nil, refusal(RefusedNoVerifiedBackup)
		}
		if age := now.Sub(b.Manifest.Created); age > r.Config.Repair.BackupMaxAge {
			re := refusal(RefusedOldBackup)
			re.Age, re.Limit = age, r.Config.Repair.BackupMaxAge
			return nil, re
		}
		if diff, err := r.repairChanges(ctx, src, &sp, now); err != nil {
			return nil, err
		} else if !diff.Empty() {
			_ = r.Store.DeletePlan(ctx, sp.ID)
			re := refusal(RefusedChanged)
			re.Plan, re.Digest, re.Changes = sp.ID, sp.Digest, diff
			return nil, re
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
		out.Quarantine, out.Backup = q.Destination, b.Location
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
			re := refusal(RefusedChanged)
			re.Plan, re.Digest, re.Changes = sp.ID, sp.Digest, PlanChanges{Files: diff}
			return nil, re
		}
		res, err := remediate.Restore(ctx, src, dst, sp.Restore, now)
		if res != nil {
			out.Files = res.Restored
		}
		_ = r.Store.DeletePlan(ctx, sp.ID)
		if err != nil {
			return nil, err
		}
		out.From = res.From
	}
	return out, nil
}

// repairChanges re-reads the plan's files and plans again: every difference from what the dry
// run showed.
func (r *Repairs) repairChanges(ctx context.Context, src storage.Store, sp *storedPlan, now time.Time) (PlanChanges, error) {
	var seen []remediate.FileState
	for _, f := range sp.Files {
		st, err := remediate.Observe(ctx, src, f.Path, true)
		if err != nil {
			return PlanChanges{}, err
		}
		seen = append(seen, st)
	}
	diff := PlanChanges{Files: remediate.Diff(sp.Files, seen)}
	fresh, err := remediate.PlanRepair(ctx, src, now)
	if err != nil {
		return PlanChanges{}, err
	}
	shown := map[string]bool{}
	for _, f := range sp.Files {
		shown[f.Path] = true
	}
	planned := map[string]bool{}
	for _, f := range fresh.Files {
		planned[f.Path] = true
		if !shown[f.Path] {
			diff.Added = append(diff.Added, f)
		}
	}
	for _, f := range sp.Files {
		if !planned[f.Path] {
			diff.Dropped = append(diff.Dropped, f.Path)
		}
	}
	return diff, nil
}
