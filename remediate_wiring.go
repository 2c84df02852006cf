package main

import (
	"context"
	"fmt"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// remediation implements commands.Remediation over the configured locations.
type remediation struct {
	cfg    *config.Config
	getenv func(string) string
	now    func() time.Time
}

func (r *remediation) stores(pipeline string) (*config.Pipeline, storage.Store, storage.Store, error) {
	p, ok := r.cfg.Pipeline(pipeline)
	if !ok {
		return nil, nil, nil, fmt.Errorf("unknown pipeline %q", pipeline)
	}
	if p.Checkpoint.Location == "" {
		return nil, nil, nil, fmt.Errorf("pipeline %s has no checkpoint.location", pipeline)
	}
	src, err := storage.Open(p.Checkpoint.Location, storageOptions(r.cfg, r.getenv))
	if err != nil {
		return nil, nil, nil, err
	}
	if p.Checkpoint.BackupLocation == "" {
		return p, src, nil, &commands.RefusalError{Reason: "pipelines[" + pipeline + "].checkpoint.backup_location is not set: no backup, no repair"}
	}
	dst, err := storage.Open(p.Checkpoint.BackupLocation, storageOptions(r.cfg, r.getenv))
	if err != nil {
		return nil, nil, nil, err
	}
	return p, src, dst, nil
}

func (r *remediation) Backup(ctx context.Context, pipeline string) (*remediate.BackupResult, error) {
	_, src, dst, err := r.stores(pipeline)
	if err != nil {
		return nil, err
	}
	return remediate.Backup(ctx, src, dst, pipeline, r.now())
}

func (r *remediation) Plan(ctx context.Context, pipeline string) (*remediate.Plan, error) {
	p, ok := r.cfg.Pipeline(pipeline)
	if !ok || p.Checkpoint.Location == "" {
		return nil, fmt.Errorf("pipeline %q has no checkpoint.location", pipeline)
	}
	src, err := storage.Open(p.Checkpoint.Location, storageOptions(r.cfg, r.getenv))
	if err != nil {
		return nil, err
	}
	return remediate.PlanRepair(ctx, src, r.now())
}

// Repair refuses without a verified backup younger than repair.backup_max_age, re-plans on
// the checkpoint as it is now, and moves the fragment into that backup's quarantine/.
func (r *remediation) Repair(ctx context.Context, pipeline string) (*remediate.QuarantineResult, *remediate.BackupResult, error) {
	_, src, dst, err := r.stores(pipeline)
	if err != nil {
		return nil, nil, err
	}
	b, err := remediate.LatestBackup(ctx, dst, pipeline)
	if err != nil {
		return nil, nil, err
	}
	if b == nil || !b.Verified {
		return nil, nil, &commands.RefusalError{Reason: "no verified backup of " + pipeline + ": run `checkpoint backup " + pipeline + "` first"}
	}
	if age := r.now().Sub(b.Manifest.Created); age > r.cfg.Repair.BackupMaxAge {
		return nil, nil, &commands.RefusalError{Reason: fmt.Sprintf("the newest verified backup of %s is %s old, older than repair.backup_max_age (%s): back up again first",
			pipeline, age.Round(time.Second), r.cfg.Repair.BackupMaxAge)}
	}
	plan, err := remediate.PlanRepair(ctx, src, r.now())
	if err != nil {
		return nil, nil, err
	}
	if plan.Empty {
		return nil, nil, &commands.RefusalError{Reason: "nothing in the checkpoint of " + pipeline + " needs quarantining now"}
	}
	q, err := remediate.Quarantine(ctx, src, dst, b, plan)
	return q, b, err
}
