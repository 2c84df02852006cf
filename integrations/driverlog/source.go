package driverlog

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"time"
)

// Source is a driver log that is not a file or an object: a Kubernetes pod's log
// (integrations/kubelogs meets it). Its lines go through the same scanner as files, so the
// signatures, the records and the redaction apply alike.
type Source interface {
	// Logs says which logs there are to read now, oldest first (a restarted container's
	// previous log before its current one). An error means none could be listed: it is noted
	// in Report.Errors and the scan goes on.
	Logs(ctx context.Context) ([]Log, error)
}

// Log is one log a Source offers.
type Log struct {
	// Name says where the lines come from, as Report.Files and Match.File show it.
	Name string
	// Pod says which driver pod and which run of its container the log is, where the source
	// chose one.
	Pod *PodNote
	// ModTime is when the log was last written, as far as the source knows.
	ModTime time.Time
	// Open streams the log; the scanner keeps only its last maxBytes. A source that can
	// bound the transfer (Kubernetes' tailLines) uses maxBytes as a hint.
	Open func(ctx context.Context, maxBytes int64) (io.ReadCloser, error)
}

// scanSource reads the logs of one source; listing and reading trouble goes to the report.
func (s *scanner) scanSource(ctx context.Context, src Source) error {
	logs, err := src.Logs(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.errorf("%v", err)
		return nil
	}
	for _, l := range logs {
		open := func(string) (logFile, error) {
			rc, err := l.Open(ctx, s.opt.MaxBytes)
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return keepTail(rc, sourceInfo{l}, s.opt.MaxBytes)
		}
		before := len(s.report.Files)
		if err := s.scanFile(ctx, l.Name, open); err != nil {
			return err
		}
		if l.Pod != nil && len(s.report.Files) > before {
			s.report.Files[len(s.report.Files)-1].Pod = l.Pod
		}
	}
	return nil
}

// sourceInfo is a source's log as an fs.FileInfo.
type sourceInfo struct{ l Log }

func (o sourceInfo) Name() string       { return o.l.Name }
func (o sourceInfo) Size() int64        { return 0 }
func (o sourceInfo) Mode() fs.FileMode  { return 0o444 }
func (o sourceInfo) ModTime() time.Time { return o.l.ModTime }
func (o sourceInfo) IsDir() bool        { return false }
func (o sourceInfo) Sys() any           { return nil }

// beatsFrom notes the heartbeats in the logs of sources (their last maxBytes each).
func beatsFrom(ctx context.Context, sources []Source, maxBytes int64, loc *time.Location, newest map[string]Beat) error {
	for _, src := range sources {
		logs, err := src.Logs(ctx)
		if err != nil {
			return err
		}
		for _, l := range logs {
			rc, err := l.Open(ctx, maxBytes)
			if err != nil {
				return fmt.Errorf("read %s: %w", l.Name, err)
			}
			f, err := keepTail(rc, sourceInfo{l}, maxBytes)
			rc.Close()
			if err != nil {
				return fmt.Errorf("read %s: %w", l.Name, err)
			}
			if err := beatsIn(io.NewSectionReader(f, 0, 1<<62), l.Name, l.ModTime, loc, newest); err != nil {
				return fmt.Errorf("read %s: %w", l.Name, err)
			}
			for q, b := range newest {
				if b.File == l.Name && b.Pod == nil {
					b.Pod = l.Pod
					newest[q] = b
				}
			}
		}
	}
	return nil
}
