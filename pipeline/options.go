package pipeline

import (
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// ProbeOptions are the checkpoint-access probe's options for pipeline p.
func ProbeOptions(cfg *config.Config, p config.Pipeline, getenv func(string) string) probe.Options {
	return probe.Options{
		Pipeline: p.Name, Location: p.Checkpoint.Location, Path: p.Probe.Path, Write: p.Probe.Write,
		StaleAfter: p.Checkpoint.StaleAfter, SlowAfter: p.Probe.SlowAfter,
		Storage: StorageOptions(cfg, getenv), JobUser: jobUser(p.Checkpoint.JobUser),
	}
}

// StorageOptions open checkpoint and backup locations (s3:// credentials,
// STORAGE_EMULATOR_HOST and AZURE_STORAGE_CONNECTION_STRING from getenv).
func StorageOptions(cfg *config.Config, getenv func(string) string) storage.Options {
	return storage.Options{Getenv: getenv,
		S3: storage.S3Options{
			Endpoint: cfg.Storage.S3.Endpoint, Region: cfg.Storage.S3.Region, PathStyle: cfg.Storage.S3.PathStyle},
		GCS:   storage.GCSOptions{Endpoint: cfg.Storage.GCS.Endpoint},
		Azure: storage.AzureOptions{Endpoint: cfg.Storage.Azure.Endpoint}}
}

// jobUser is pipelines[].checkpoint.job_user for the access check; nil when unset (the check
// then judges streamwatch's own uid and groups, and an abfss:// location is not judged).
func jobUser(ju config.JobUser) *access.User {
	if !ju.Set {
		return nil
	}
	if ju.Principal != "" {
		return &access.User{Principal: ju.Principal, Whose: "job_user"}
	}
	u := &access.User{UID: int(ju.UID), Whose: "job_user"}
	for _, g := range ju.GIDs {
		u.GIDs = append(u.GIDs, int(g))
	}
	return u
}
