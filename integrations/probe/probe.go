// Package probe checks that a pipeline's checkpoint location can be used the way Spark uses it,
// in one timed pass the scheduler, the `/streamwatch probe` command and the `streamwatch probe`
// CLI all run:
//
//  1. read-only validation: stat the location, list it (and offsets/, commits/), read and parse
//     metadata and the newest offsets/<N> and commits/<M> files;
//  2. a write test (when asked for): write a small uniquely named object under the probe path,
//     read it back, compare the bytes, delete it;
//  3. for local paths, who owns the checkpoint directory, its mode, and who the probe runs as, so
//     that "this user cannot write there" is visible;
//  4. freshness: the age of the newest commit against the stale threshold;
//  5. for local paths, whether the job's user may create files in the location and its offsets/,
//     commits/ and state/ folders, judged without writing (integrations/access); a "no" fails
//     the probe even when streamwatch's own write test passed, since the job is who must write.
//     For gs://, whether streamwatch's own identity may create and delete objects in the bucket,
//     from the bucket's testIamPermissions.
//
// The first failing step ends the probe; the result is FAILED with a Class saying what kind of
// failure it was. Slow steps and a stale checkpoint make it DEGRADED. The checkpoint itself is
// never written: the write test only touches the probe path, by default
// <location>/_streamwatch_probe, which Spark ignores.
//
// The package imports neither Slack, Redis nor the config package.
package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// DefaultDir is where the write test writes when Options.Path is empty, relative to the
// checkpoint location. Spark ignores it: it reads only metadata, offsets/, commits/, sources/
// and state/.
const DefaultDir = "_streamwatch_probe"

// Options configures one probe.
type Options struct {
	Pipeline string
	// Location is the checkpoint location: a plain path, file:// or s3://bucket/prefix.
	Location string
	// Path is where the write test writes. Empty means <Location>/_streamwatch_probe; a relative
	// path is relative to Location; anything else (absolute path, file://, s3://) is a location
	// of its own.
	Path string
	// Write turns the write test on.
	Write bool
	// StaleAfter is the age of the newest commit from which the checkpoint is stale; 0 turns the
	// freshness check off.
	StaleAfter time.Duration
	// SlowAfter is the duration from which a step is slow; 0 turns the check off.
	SlowAfter time.Duration
	// Storage reaches the location (S3 endpoint, credentials).
	Storage storage.Options
	// Now is the clock for Started, the step timings and the commit age; nil means time.Now.
	Now func() time.Time
	// Rand makes the probe object's name unique; nil means crypto/rand.
	Rand io.Reader
	// JobUser is whose access the read-only check judges; nil means the probing process's own.
	JobUser *access.User
}

// Status is the verdict of a probe.
type Status string

// The verdicts.
const (
	StatusOK       Status = "OK"
	StatusDegraded Status = "DEGRADED" // every step passed, but one was slow or the checkpoint is stale
	StatusFailed   Status = "FAILED"
)

// Class is what kind of failure ended a probe; "" unless the probe FAILED.
type Class string

// The failure classes.
const (
	ClassNone             Class = ""
	ClassPermissionDenied Class = "PERMISSION_DENIED"
	ClassNotFound         Class = "NOT_FOUND"
	ClassTimeout          Class = "TIMEOUT" // the context's deadline, or a network or server timeout
	ClassCorrupt          Class = "CORRUPT" // a checkpoint file that does not parse, or a probe object read back wrong
	ClassUnavailable      Class = "UNAVAILABLE"
)

// The step names, in the order the steps run.
const (
	StepStat         = "stat"
	StepList         = "list"
	StepReadMetadata = "read metadata"
	StepReadOffsets  = "read offsets"
	StepReadCommits  = "read commits"
	StepWrite        = "write"
	StepReadBack     = "read back"
	StepDelete       = "delete"
)

// Result is the outcome of one probe.
type Result struct {
	Pipeline string `json:"pipeline"`
	Location string `json:"location"`
	Status   Status `json:"status"`
	Class    Class  `json:"class,omitempty"`
	// Why is why the status is what it is: one finding for OK and FAILED, one or two
	// (stale, slow) for DEGRADED. commands words it.
	Why []Finding `json:"why,omitempty"`
	// Reason is an earlier version's words for Why, e.g. "permission denied writing
	// /var/lib/spark/checkpoints/sms-replies/_streamwatch_probe/probe-<id>"; empty in
	// results written since.
	Reason string `json:"reason,omitempty"`
	// Err is the raw error of the failed step.
	Err   string `json:"error,omitempty"`
	Steps []Step `json:"steps"`
	// Owner describes the local checkpoint directory, or where a local write was refused; when
	// that does not exist, its nearest existing parent. Nil for S3 and when nothing can be
	// stat'ed.
	Owner *Ownership `json:"owner,omitempty"`
	// NewestCommit is the modification time of the newest commits/<M>; zero when there is none
	// or it was not reached. CommitAge is Started minus NewestCommit.
	NewestCommit time.Time     `json:"newest_commit,omitzero"`
	CommitAge    time.Duration `json:"commit_age,omitempty"`
	// Access is whether the job's user may create files in the checkpoint's folders, judged
	// without writing; for gs:// whether streamwatch's identity may create and delete objects
	// (testIamPermissions); for s3:// it says it cannot be judged. Nil when the location was not
	// reached.
	Access  *access.Report `json:"access,omitempty"`
	Started time.Time      `json:"started"`
	Took    time.Duration  `json:"took"`
}

// Step is one timed step of a probe.
type Step struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Skipped is set for the steps after the one that failed.
	Skipped bool          `json:"skipped,omitempty"`
	Took    time.Duration `json:"took"`
	// Found is what the step found, or why it failed; nil for a skipped step.
	Found *Finding `json:"found,omitempty"`
	// Detail is an earlier version's words for Found (or "skipped").
	Detail string `json:"detail,omitempty"`
	Err    string `json:"error,omitempty"`
}

// Ownership is who owns a local directory and who the probe runs as.
type Ownership struct {
	Dir        string      `json:"dir"`
	UID        int         `json:"uid"`
	GID        int         `json:"gid"`
	Owner      string      `json:"owner"` // user name, or the uid when it has none
	Group      string      `json:"group"` // group name, or the gid when it has none
	Mode       fs.FileMode `json:"mode"`
	ProcUID    int         `json:"proc_uid"`    // the probing process's effective uid
	ProcGroups []int       `json:"proc_groups"` // its effective gid, then its supplementary groups
	CanWrite   bool        `json:"can_write"`   // best effort, from the mode bits (true for root)
}

// maxReadBytes bounds the checkpoint files read; the newest offsets file of a query reading a
// few thousand partitions is well under it.
const maxReadBytes = 16 << 20

// Run probes one checkpoint location. It never panics and always returns a result. Every step
// stops when ctx ends: the probe is then FAILED with ClassTimeout (deadline) or ClassUnavailable
// (cancelled).
func Run(ctx context.Context, opt Options) (res Result) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Rand == nil {
		opt.Rand = rand.Reader
	}
	p := &prober{ctx: ctx, opt: opt}
	p.res = Result{Pipeline: opt.Pipeline, Location: opt.Location, Started: opt.Now()}
	p.ckpt = place{location: opt.Location, dir: localDir(opt.Location)} // for messages until Open
	defer func() {
		if v := recover(); v != nil {
			res = p.res
			res.Status, res.Class = StatusFailed, ClassUnavailable
			res.Why = []Finding{{Code: CodeCrashed, Path: opt.Location, Cause: fmt.Sprint(v)}}
			res.Err = fmt.Sprint(v)
			res.Took = opt.Now().Sub(res.Started)
		}
	}()
	p.run()
	p.res.Took = opt.Now().Sub(p.res.Started)
	return p.res
}

// prober carries one probe's state from step to step.
type prober struct {
	ctx context.Context
	opt Options
	res Result

	ckpt       place
	failed     *failure
	failedStep string

	hasMetadata            bool
	offsetsDir, commitsDir bool
	latestOffsets          int64 // -1: none
	latestCommit           int64 // -1: none
	commitRead             bool

	probe     place  // where the write test writes
	probeName string // the probe object, relative to probe.location
	wrote     bool
}

// failure is why a step failed.
type failure struct {
	class Class
	why   Finding
	err   error
}

// place is a store and how to show its names to a person.
type place struct {
	store    storage.Store
	location string
	dir      string // the directory on the local filesystem; "" for S3
}

// show is the full path or URL of a name in the place.
func (pl place) show(name string) string {
	if pl.dir != "" {
		if name == "" {
			return pl.dir
		}
		return filepath.Join(pl.dir, filepath.FromSlash(name))
	}
	if name == "" {
		return pl.location
	}
	return strings.TrimRight(pl.location, "/") + "/" + name
}

func openPlace(location string, opts storage.Options) (place, error) {
	s, err := storage.Open(location, opts)
	if err != nil {
		return place{}, err
	}
	return place{store: s, location: location, dir: localDir(location)}, nil
}

// localDir is the filesystem path of a local location as storage.Open reads it; "" for a
// remote one.
func localDir(location string) string {
	scheme, _, hasScheme := strings.Cut(location, "://")
	switch {
	case strings.TrimSpace(location) == "":
		return ""
	case !hasScheme && strings.HasPrefix(location, "file:"):
		return filepath.Clean("/" + strings.TrimLeft(strings.TrimPrefix(location, "file:"), "/"))
	case !hasScheme:
		return filepath.Clean(location)
	case strings.EqualFold(scheme, "file"):
		if u, err := url.Parse(location); err == nil {
			return filepath.Clean(u.Path)
		}
	}
	return ""
}

func (p *prober) run() {
	p.latestOffsets, p.latestCommit = -1, -1
	p.step(StepStat, p.stat)
	p.step(StepList, p.list)
	p.step(StepReadMetadata, p.readMetadata)
	p.step(StepReadOffsets, p.readOffsets)
	p.step(StepReadCommits, p.readCommits)
	if p.opt.Write {
		p.step(StepWrite, p.write)
		p.step(StepReadBack, p.readBack)
		// Delete even after a failed read back, so that the probe leaves nothing behind.
		if p.wrote && p.failedStep == StepReadBack {
			p.cleanup()
		} else {
			p.step(StepDelete, p.delete)
		}
	}
	p.ownership()
	p.judgeAccess()
	p.verdict()
}

// judgeAccess decides whether the job's user may write the checkpoint, from what can be read.
func (p *prober) judgeAccess() {
	if p.ckpt.store == nil || p.ctx.Err() != nil || p.failedStep == StepStat {
		return
	}
	u := access.Self()
	if p.opt.JobUser != nil {
		u = *p.opt.JobUser
	}
	if pt, ok := p.ckpt.store.(permissionTester); ok && p.ckpt.dir == "" {
		p.res.Access = p.testPermissions(pt)
		return
	}
	if p.ckpt.dir == "" {
		p.res.Access = p.judgeRemote(u)
		return
	}
	rep, ok := guard(p.ctx, func() access.Report { return access.Check(p.ckpt.dir, u) })
	if ok {
		p.res.Access = &rep
	}
}

// accessControlled is a store that can say who may do what to its directories (abfss://).
type accessControlled interface {
	AccessControl(ctx context.Context, names ...string) (ancestors, dirs []storage.PathAccess, err error)
}

// judgeRemote judges an object store's checkpoint where the store can say (an abfss://
// location's ACLs, for job_user's principal); elsewhere it says that access was not judged.
func (p *prober) judgeRemote(u access.User) *access.Report {
	loc := p.opt.Location
	notJudged := func(why access.Code) *access.Report {
		return &access.Report{Location: loc, User: u, Code: why}
	}
	ac, ok := p.ckpt.store.(accessControlled)
	switch {
	case !ok:
		return notJudged(access.NotJudgedObjectStore)
	case !strings.HasPrefix(loc, "abfs"):
		return notJudged(access.NotJudgedWasbs)
	case u.Principal == "":
		return notJudged(access.NotJudgedNoPrincipal)
	}
	names := []string{""}
	for _, d := range access.SparkDirs {
		if e, err := p.ckpt.store.Stat(p.ctx, d); err == nil && e.IsDir {
			names = append(names, d)
		}
	}
	ancestors, dirs, err := ac.AccessControl(p.ctx, names...)
	if err != nil {
		return &access.Report{Location: loc, User: u, Err: fmt.Errorf("access control of %s could not be read: %w", loc, err).Error()}
	}
	toDir := func(a storage.PathAccess, path string) (access.Dir, error) {
		return access.ObjectDir(path, a.Owner, a.Group, a.Permissions, a.ACL)
	}
	var up []access.Dir
	for _, a := range ancestors {
		d, err := toDir(a, a.Path)
		if err != nil {
			return &access.Report{Location: loc, User: u, Err: err.Error()}
		}
		up = append(up, d)
	}
	var judged []access.DirJudgment
	for i, a := range dirs {
		name, path := "", loc
		if names[i] != "" {
			name, path = names[i]+"/", strings.TrimSuffix(loc, "/")+"/"+names[i]
		}
		d, err := toDir(a, path)
		if err != nil {
			return &access.Report{Location: loc, User: u, Err: err.Error()}
		}
		judged = append(judged, access.DirJudgment{Name: name, Dir: d})
	}
	r := access.CheckPrincipal(loc, u, up, judged)
	return &r
}

// permissionTester is a store that says, without writing, which permissions its caller holds
// on it (gs://: the bucket's testIamPermissions).
type permissionTester interface {
	Bucket() string
	TestPermissions(ctx context.Context, perms []string) ([]string, error)
}

// testPermissions judges an object store's access from what it says of streamwatch's own
// identity; when it cannot say (403, 404, an emulator without IAM), access is not judged.
func (p *prober) testPermissions(pt permissionTester) *access.Report {
	granted, err := pt.TestPermissions(p.ctx, access.GCSWrite)
	if err != nil {
		return &access.Report{Location: p.opt.Location, Identity: access.GCSIdentity, Code: access.NotJudgedIAMUnanswered,
			Bucket: pt.Bucket(), Cause: strings.TrimPrefix(err.Error(), "test permissions "+pt.Bucket()+": ")}
	}
	r := access.GCS(p.opt.Location, pt.Bucket(), granted, p.opt.JobUser != nil)
	return &r
}

// step runs one step and records it; after a failure it records the step as skipped.
func (p *prober) step(name string, fn func() (*Finding, *failure)) {
	if p.failed != nil {
		p.res.Steps = append(p.res.Steps, Step{Name: name, Skipped: true})
		return
	}
	start := p.opt.Now()
	var (
		detail *Finding
		f      *failure
	)
	if err := p.ctx.Err(); err != nil {
		f = storageFailure(name, p.ckpt.show(""), err)
	} else {
		detail, f = fn()
	}
	st := Step{Name: name, OK: f == nil, Took: p.opt.Now().Sub(start), Found: detail}
	if f != nil {
		st.Found = &f.why
		if f.err != nil {
			st.Err = f.err.Error()
		}
		p.failed, p.failedStep = f, name
	}
	p.res.Steps = append(p.res.Steps, st)
}

// storageFailure classifies an error of a storage call made by a step on the object at full.
func storageFailure(stepName, full string, err error) *failure {
	at := Finding{Step: stepName, Path: full}
	with := func(class Class, code Code) *failure {
		at.Code = code
		return &failure{class, at, err}
	}
	var pe *spark.ParseError
	switch {
	case errors.As(err, &pe):
		return &failure{ClassCorrupt, Finding{Code: CodeCorruptFile, Path: full, Line: pe.Line, Problem: string(pe.Problem)}, err}
	case errors.Is(err, context.Canceled):
		return with(ClassUnavailable, CodeCancelled)
	case errors.Is(err, context.DeadlineExceeded), storage.Class(err) == storage.ClassTimeout:
		return with(ClassTimeout, CodeTimedOut)
	}
	switch storage.Class(err) {
	case storage.ClassPermission:
		return with(ClassPermissionDenied, CodePermissionDenied)
	case storage.ClassNotFound:
		return with(ClassNotFound, CodeNotFound)
	}
	at.Cause = cause(err)
	return with(ClassUnavailable, CodeStepFailed)
}

// cause is the innermost message of a storage error, without the operation and path it
// already names.
func cause(err error) string {
	var se *storage.Error
	if errors.As(err, &se) && se.Err != nil {
		return se.Err.Error()
	}
	return err.Error()
}

func (p *prober) stat() (*Finding, *failure) {
	pl, err := openPlace(p.opt.Location, p.opt.Storage)
	if err != nil {
		return nil, &failure{ClassUnavailable, Finding{Code: CodeCannotOpen, Path: p.opt.Location, Cause: openCause(p.opt.Location, err)}, err}
	}
	p.ckpt = pl
	e, err := pl.store.Stat(p.ctx, "")
	if err != nil {
		f := storageFailure(StepStat, pl.show(""), err)
		if f.class == ClassNotFound {
			f.why = Finding{Code: CodeNoLocation, Path: pl.show("")}
		}
		return nil, f
	}
	if !e.IsDir {
		return nil, &failure{ClassNotFound, Finding{Code: CodeIsFile, Path: pl.show("")},
			&storage.Error{Op: "stat", Path: pl.location, Class: storage.ClassNotFound, Err: errors.New("not a directory")}}
	}
	return &Finding{Code: CodeDirExists}, nil
}

func (p *prober) list() (*Finding, *failure) {
	root, err := storage.ListNames(p.ctx, p.ckpt.store, "")
	if err != nil {
		return nil, storageFailure(StepList, p.ckpt.show(""), err)
	}
	for _, e := range root {
		switch {
		case e.Name == "metadata" && !e.IsDir:
			p.hasMetadata = true
		case e.Name == "offsets" && e.IsDir:
			p.offsetsDir = true
		case e.Name == "commits" && e.IsDir:
			p.commitsDir = true
		}
	}
	if !p.hasMetadata && !p.offsetsDir && !p.commitsDir {
		return nil, &failure{ClassNotFound,
			Finding{Code: CodeNoCheckpointFiles, Path: p.ckpt.show("")},
			&storage.Error{Op: "list", Path: p.ckpt.location, Class: storage.ClassNotFound,
				Err: fmt.Errorf("%d entries, none of them a checkpoint file", len(root))}}
	}
	found := &Finding{Code: CodeListed, N: len(root), NoMetadata: !p.hasMetadata}
	for _, log := range []struct {
		dir     string
		present *bool
		latest  *int64
	}{{"offsets", &p.offsetsDir, &p.latestOffsets}, {"commits", &p.commitsDir, &p.latestCommit}} {
		if !*log.present {
			found.Logs = append(found.Logs, LogDir{Dir: log.dir})
			continue
		}
		entries, err := storage.ListNames(p.ctx, p.ckpt.store, log.dir)
		if storage.Class(err) == storage.ClassNotFound && p.ctx.Err() == nil {
			*log.present = false // an empty S3 "directory", or removed since the root was listed
			found.Logs = append(found.Logs, LogDir{Dir: log.dir})
			continue
		}
		if err != nil {
			return nil, storageFailure(StepList, p.ckpt.show(log.dir), err)
		}
		first, n := int64(-1), 0
		for _, e := range entries {
			id, ok := spark.ParseBatchID(e.Name)
			if !ok || e.IsDir {
				continue
			}
			n++
			if first < 0 || id < first {
				first = id
			}
			*log.latest = max(*log.latest, id)
		}
		d := LogDir{Dir: log.dir, Present: true, Files: n}
		if n > 0 {
			d.First, d.Last = first, *log.latest
		}
		found.Logs = append(found.Logs, d)
	}
	return found, nil
}

// read reads one checkpoint file for a step.
func (p *prober) read(stepName, name string) ([]byte, *failure) {
	data, err := storage.ReadAll(p.ctx, p.ckpt.store, name, maxReadBytes)
	if err != nil {
		return nil, storageFailure(stepName, p.ckpt.show(name), err)
	}
	return data, nil
}

func (p *prober) readMetadata() (*Finding, *failure) {
	// Without metadata Spark starts anyway, with a new query id: not an access problem.
	if !p.hasMetadata {
		return &Finding{Code: CodeNoMetadata}, nil
	}
	data, f := p.read(StepReadMetadata, "metadata")
	if f != nil {
		return nil, f
	}
	m, err := spark.ParseMetadata("metadata", data)
	if err != nil {
		return nil, storageFailure(StepReadMetadata, p.ckpt.show("metadata"), err)
	}
	return &Finding{Code: CodeQueryID, ID: m.ID}, nil
}

func (p *prober) readOffsets() (*Finding, *failure) {
	if p.latestOffsets < 0 {
		return &Finding{Code: CodeNoBatchPlanned}, nil
	}
	name := fmt.Sprintf("offsets/%d", p.latestOffsets)
	data, f := p.read(StepReadOffsets, name)
	if f != nil {
		return nil, f
	}
	seq, err := spark.ParseOffsets(name, data)
	if err != nil {
		return nil, storageFailure(StepReadOffsets, p.ckpt.show(name), err)
	}
	found := &Finding{Code: CodeOffsetsRead, Batch: p.latestOffsets, N: len(seq.Sources)}
	if seq.HasMetadata && seq.Metadata.TimestampMs > 0 {
		found.At = time.UnixMilli(seq.Metadata.TimestampMs).UTC()
		found.Age = p.res.Started.Sub(found.At)
	}
	return found, nil
}

func (p *prober) readCommits() (*Finding, *failure) {
	if p.latestCommit < 0 {
		return &Finding{Code: CodeNoBatchCommitted}, nil
	}
	name := fmt.Sprintf("commits/%d", p.latestCommit)
	e, err := p.ckpt.store.Stat(p.ctx, name)
	if err != nil {
		return nil, storageFailure(StepReadCommits, p.ckpt.show(name), err)
	}
	data, f := p.read(StepReadCommits, name)
	if f != nil {
		return nil, f
	}
	if _, err := spark.ParseCommit(name, data); err != nil {
		return nil, storageFailure(StepReadCommits, p.ckpt.show(name), err)
	}
	p.commitRead = true
	p.res.NewestCommit = e.ModTime
	p.res.CommitAge = p.res.Started.Sub(e.ModTime)
	return &Finding{Code: CodeCommitRead, Batch: p.latestCommit, At: e.ModTime.UTC(), Age: p.res.CommitAge}, nil
}

// sparkDirs are the checkpoint's own directories, which the write test must never touch.
var sparkDirs = map[string]bool{"metadata": true, "offsets": true, "commits": true, "sources": true, "state": true}

// probeTarget resolves Options.Path.
func (p *prober) probeTarget() (place, string, error) {
	pth := p.opt.Path
	if pth == "" {
		return p.ckpt, DefaultDir, nil
	}
	if !strings.Contains(pth, "://") && !strings.HasPrefix(pth, "file:") && !filepath.IsAbs(pth) {
		rel := path.Clean(filepath.ToSlash(pth))
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			return place{}, "", errors.New("a relative probe path must stay inside the checkpoint location")
		}
		if first, _, _ := strings.Cut(rel, "/"); sparkDirs[first] {
			return place{}, "", fmt.Errorf("it is inside the checkpoint's %s/, which belongs to Spark", first)
		}
		return p.ckpt, rel, nil
	}
	pl, err := openPlace(pth, p.opt.Storage)
	if err != nil {
		return place{}, "", errors.New(openCause(pth, err))
	}
	return pl, "", nil
}

// openCause is why storage.Open refused a location, without the location it repeats.
func openCause(location string, err error) string {
	return strings.TrimPrefix(err.Error(), "open storage "+location+": ")
}

// payload is what the probe writes: it names itself, so a read back of someone else's object
// does not match.
func (p *prober) payload() []byte {
	return fmt.Appendf(nil, "streamwatch probe\npipeline %s\nobject %s\n", p.opt.Pipeline, path.Base(p.probeName))
}

func (p *prober) write() (*Finding, *failure) {
	pl, dir, err := p.probeTarget()
	if err != nil {
		return nil, &failure{ClassUnavailable, Finding{Code: CodeBadProbePath, Path: p.opt.Path, Cause: err.Error()}, err}
	}
	var rnd [4]byte
	if _, err := io.ReadFull(p.opt.Rand, rnd[:]); err != nil {
		return nil, &failure{ClassUnavailable, Finding{Code: CodeNoProbeName, Cause: err.Error()}, err}
	}
	p.probe = pl
	p.probeName = path.Join(dir, fmt.Sprintf("probe-%d-%s", p.opt.Now().UnixNano(), hex.EncodeToString(rnd[:])))
	data := p.payload()
	if err := pl.store.Write(p.ctx, p.probeName, bytes.NewReader(data)); err != nil {
		return nil, storageFailure(StepWrite, pl.show(p.probeName), err)
	}
	p.wrote = true
	return &Finding{Code: CodeWrote, N: len(data), Path: pl.show(p.probeName)}, nil
}

func (p *prober) readBack() (*Finding, *failure) {
	want := p.payload()
	got, err := storage.ReadAll(p.ctx, p.probe.store, p.probeName, int64(len(want))+4096)
	if err != nil {
		return nil, storageFailure(StepReadBack, p.probe.show(p.probeName), err)
	}
	if !bytes.Equal(got, want) {
		err := fmt.Errorf("read back %s: got %d bytes %q, want %d bytes %q", p.probeName, len(got), clip(got), len(want), clip(want))
		return nil, &failure{ClassCorrupt, Finding{Code: CodeReadBackDiffers, Path: p.probe.show(p.probeName)}, err}
	}
	return &Finding{Code: CodeBytesMatch, N: len(got)}, nil
}

func (p *prober) delete() (*Finding, *failure) {
	if err := p.probe.store.Delete(p.ctx, p.probeName); err != nil {
		return nil, storageFailure(StepDelete, p.probe.show(p.probeName), err)
	}
	return &Finding{Code: CodeDeleted, Path: p.probe.show(p.probeName)}, nil
}

// cleanup deletes the probe object after a failed read back and records the attempt as the
// delete step, without letting it change the verdict.
func (p *prober) cleanup() {
	start := p.opt.Now()
	st := Step{Name: StepDelete, OK: true}
	if err := p.probe.store.Delete(p.ctx, p.probeName); err != nil {
		st.OK, st.Err = false, err.Error()
		st.Found = &Finding{Code: CodeCleanup, Of: &storageFailure(StepDelete, p.probe.show(p.probeName), err).why}
	} else {
		st.Found = &Finding{Code: CodeCleanup, Of: &Finding{Code: CodeDeleted, Path: p.probe.show(p.probeName)}}
	}
	st.Took = p.opt.Now().Sub(start)
	p.res.Steps = append(p.res.Steps, st)
}

// ownership describes the local checkpoint directory, or, when a local write was refused, the
// directory that refused it (lookupOwnership walks up to the nearest one that exists).
func (p *prober) ownership() {
	if p.ckpt.store == nil || p.ckpt.dir == "" || p.ctx.Err() != nil {
		return
	}
	dir := p.ckpt.dir
	if p.failedStep == StepWrite && p.failed.class == ClassPermissionDenied && p.probe.dir != "" {
		dir = filepath.Dir(p.probe.show(p.probeName))
	}
	o, ok := guard(p.ctx, func() *Ownership { return lookupOwnership(dir) })
	if ok && o != nil {
		p.res.Owner = o
	}
}

// guard runs f and stops waiting when ctx ends (a hung mount can block stat forever).
func guard[T any](ctx context.Context, f func() T) (T, bool) {
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v, true
	case <-ctx.Done():
		var zero T
		return zero, false
	}
}

func (p *prober) verdict() {
	r := &p.res
	if f := p.failed; f != nil {
		r.Status, r.Class, r.Why = StatusFailed, f.class, []Finding{f.why}
		if f.err != nil {
			r.Err = f.err.Error()
		}
		return
	}
	if a := r.Access; a.Judged() && !a.Writable {
		r.Status, r.Class, r.Why = StatusFailed, ClassPermissionDenied, []Finding{{Code: CodeAccessRefused}}
		return
	}
	var problems []Finding
	if p.opt.StaleAfter > 0 {
		switch {
		case p.commitRead && r.CommitAge > p.opt.StaleAfter:
			problems = append(problems, Finding{Code: CodeStale, Batch: p.latestCommit, Age: r.CommitAge, After: p.opt.StaleAfter})
		case !p.commitRead:
			problems = append(problems, Finding{Code: CodeNeverCommitted, After: p.opt.StaleAfter})
		}
	}
	if p.opt.SlowAfter > 0 {
		var slow []Timing
		for _, s := range r.Steps {
			if !s.Skipped && s.Took > p.opt.SlowAfter {
				slow = append(slow, Timing{Step: s.Name, Took: s.Took})
			}
		}
		if len(slow) > 0 {
			problems = append(problems, Finding{Code: CodeSlow, Slow: slow, After: p.opt.SlowAfter})
		}
	}
	if len(problems) > 0 {
		r.Status, r.Why = StatusDegraded, problems
		return
	}
	r.Status = StatusOK
	ok := Finding{Code: CodeHealthy, Path: p.ckpt.show(""), Write: p.opt.Write}
	if p.commitRead {
		ok.Committed, ok.Age = true, r.CommitAge
	}
	r.Why = []Finding{ok}
}

func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
