// Package spark reads a Spark Structured Streaming checkpoint location and says what state the
// query is in: the query id, the latest planned and committed batches, the Kafka offsets and
// the records still pending, the state store versions, and findings with their evidence.
//
// The reader follows docs/spark-checkpoint-format.md: it lists directories and reads only the
// few newest files (metadata, the latest offsets and commits files, the offsets of the latest
// committed batch and the operator metadata), never the whole tree.
package spark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// Store is what the diagnosis needs of a checkpoint location; storage.Store satisfies it.
// When the store also implements storage.NameLister (local directories), the large
// directories are listed by name only and the few files whose time or size matters are
// stat'ed one by one.
type Store interface {
	Location() string
	List(ctx context.Context, dir string) ([]storage.Entry, error)
	Stat(ctx context.Context, name string) (storage.Entry, error)
	Read(ctx context.Context, name string) (io.ReadCloser, error)
}

// Options tunes Diagnose. The zero value is usable.
type Options struct {
	// StaleAfter is how long without a commit makes the checkpoint STALE; 0 means 10m.
	StaleAfter time.Duration
	// TempFileAge is the age from which a temp file or orphan checksum is left over rather than
	// an atomic write in progress; 0 means 5m.
	TempFileAge time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LogEndOffsets are the brokers' log-end offsets, topic -> partition -> offset. With them
	// the report counts the records still pending; nil means unknown.
	LogEndOffsets KafkaOffsets
	// LogStartOffsets are the brokers' earliest offsets (what retention left), in the same
	// shape. With them, pending counts only records that still exist, and the offsets the
	// checkpoint would resume from that are no longer on the brokers are a finding.
	LogStartOffsets KafkaOffsets
	// WaitingSince is the timestamp of the oldest record waiting beyond the checkpoint, when
	// the caller read it (zero: unknown). The checkpoint is stale only once records have
	// waited stale_after without a commit: the time before they arrived does not count.
	WaitingSince time.Time
	// Concurrency bounds the state directories listed at once; 0 means 8.
	Concurrency int
	// MaxFileBytes bounds a file read; 0 means 16 MiB.
	MaxFileBytes int64
}

func (o *Options) defaults() {
	if o.StaleAfter <= 0 {
		o.StaleAfter = 10 * time.Minute
	}
	if o.TempFileAge <= 0 {
		o.TempFileAge = 5 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 16 << 20
	}
}

// Diagnose reads the checkpoint in store. Storage failures become findings (UNREADABLE,
// MISSING), so the report is always returned; the error is non-nil only when ctx ended
// before the diagnosis did, and the report then holds what was found until then.
func Diagnose(ctx context.Context, store Store, opts Options) (*Report, error) {
	opts.defaults()
	d := &diagnoser{ctx: ctx, store: store, opts: opts, now: opts.Now()}
	d.r = &Report{Location: store.Location(), CheckedAt: d.now, StaleAfter: opts.StaleAfter}
	if d.read() {
		d.judge()
	}
	sort.SliceStable(d.r.Findings, func(i, j int) bool { return d.r.Findings[i].Severity > d.r.Findings[j].Severity })
	return d.r, ctx.Err()
}

type diagnoser struct {
	ctx   context.Context
	store Store
	opts  Options
	now   time.Time
	r     *Report

	offsetFiles  batchFiles
	commitFiles  batchFiles
	commitsKnown bool // commits/ was listed (or is absent)
	stopped      bool // the context ended; reported once
	opMeta       map[int]*OperatorMetadata
}

func (d *diagnoser) add(f Finding) { d.r.Findings = append(d.r.Findings, f) }

// ioFailure records a storage error as a finding. Once the context has ended every later
// operation fails too, so that is said once.
func (d *diagnoser) ioFailure(op, name string, err error) {
	class := storage.Class(err)
	display := name
	if display == "" {
		display = d.r.Location
	}
	if cerr := d.ctx.Err(); cerr != nil {
		if !d.stopped {
			d.stopped = true
			d.add(Finding{Code: CodeUnreadable, Severity: SeverityCritical, File: name, ErrClass: class,
				Summary:  Line{Kind: LineStopped, File: display, Text: cerr.Error()},
				Evidence: []Line{{Kind: LineError, Text: err.Error()}, {Kind: LineErrorClass, Class: class}, {Kind: LineAfterStopUnknown}}})
		}
		return
	}
	if class == storage.ClassNotFound {
		d.add(Finding{Code: CodeMissing, Severity: SeverityWarning, File: name,
			Summary:  Line{Kind: LineVanished, File: display},
			Evidence: []Line{{Kind: LineError, Text: err.Error()}}})
		return
	}
	summary := Line{Kind: LineCannot, Op: op, File: display, Class: class}
	var se *storage.Error
	if errors.As(err, &se) {
		summary = Line{Kind: LineCannotError, Text: se.Error()}
	}
	d.add(Finding{Code: CodeUnreadable, Severity: SeverityCritical, File: name, ErrClass: class,
		Summary: summary, Evidence: []Line{{Kind: LineError, Text: err.Error()}, {Kind: LineErrorClass, Class: class}}})
}

func (d *diagnoser) readFile(name string) ([]byte, bool) {
	data, err := storage.ReadAll(d.ctx, d.store, name, d.opts.MaxFileBytes)
	if err != nil {
		d.ioFailure("read", name, err)
		return nil, false
	}
	return data, true
}

func (d *diagnoser) corrupt(err error, severity Severity, remedy ...Line) {
	var pe *ParseError
	f := Finding{Code: CodeCorruptFile, Severity: severity, Evidence: append([]Line{{Kind: LineError, Text: err.Error()}}, remedy...)}
	if errors.As(err, &pe) {
		f.File, f.Problem = pe.File, pe.Problem
		f.Summary = Line{Kind: LineCorrupt, File: pe.File, Problem: pe.Problem}
	} else {
		f.Summary = Line{Kind: LineError, Text: err.Error()}
	}
	d.add(f)
}

// read gathers the facts; false means there is no checkpoint to judge.
func (d *diagnoser) read() bool {
	root, err := d.store.List(d.ctx, "")
	if err != nil {
		if storage.Class(err) == storage.ClassNotFound {
			d.add(Finding{Code: CodeMissing, Severity: SeverityCritical, File: "",
				Summary:  Line{Kind: LineNoCheckpoint, File: d.r.Location},
				Evidence: []Line{{Kind: LineError, Text: err.Error()}}})
		} else {
			d.ioFailure("list", "", err)
		}
		return false
	}
	names := map[string]storage.Entry{}
	for _, e := range root {
		names[e.Name] = e
	}
	d.leftovers("", root)
	_, hasMeta := names["metadata"]
	offsetsDir, hasOffsets := names["offsets"]
	commitsDir, hasCommits := names["commits"]
	if !hasMeta && !hasOffsets && !hasCommits {
		d.add(Finding{Code: CodeMissing, Severity: SeverityCritical, File: "",
			Summary:  Line{Kind: LineNotACheckpoint, File: d.r.Location},
			Evidence: []Line{{Kind: LineNoCheckpointFiles, N: int64(len(root))}}})
		return false
	}

	if hasMeta {
		if data, ok := d.readFile("metadata"); ok {
			if m, err := ParseMetadata("metadata", data); err != nil {
				d.corrupt(err, SeverityCritical, Line{Kind: LineMetadataFails})
			} else {
				d.r.QueryID = m.ID
			}
		}
	} else {
		d.add(Finding{Code: CodeMissing, Severity: SeverityWarning, File: "metadata",
			Summary:  Line{Kind: LineNoMetadata},
			Evidence: []Line{{Kind: LineMetadataOnce}, {Kind: LineMetadataNewID}}})
	}

	d.r.Offsets, d.offsetFiles = d.listLog("offsets", hasOffsets && offsetsDir.IsDir)
	d.r.Commits, d.commitFiles = d.listLog("commits", hasCommits && commitsDir.IsDir)
	d.commitsKnown = d.r.Commits.Readable || !d.r.Commits.Present

	if e, ok := names["sources"]; ok && e.IsDir {
		if entries, err := storage.ListNames(d.ctx, d.store, "sources"); err != nil {
			d.ioFailure("list", "sources/", err)
		} else {
			for _, s := range entries {
				if i, err := strconv.Atoi(s.Name); err == nil && s.IsDir && i >= 0 {
					d.r.SourceDirs = max(d.r.SourceDirs, i+1)
				}
			}
		}
	}

	if n := d.r.Offsets.Latest; n >= 0 {
		d.r.Planned = d.readPlanned(n, SeverityCritical)
	}
	if c := d.r.Commits.Latest; c >= 0 {
		e, _ := d.commitFiles.find(c)
		e = d.info("commits/", e)
		cb := &CommittedBatch{ID: c, File: "commits/" + e.Name, Size: e.Size, ModTime: e.ModTime}
		if data, ok := d.readFile(cb.File); ok {
			if cm, err := ParseCommit(cb.File, data); err != nil {
				d.corrupt(err, SeverityCritical, Line{Kind: LineCommitNoFallback}, Line{Kind: LineCommitRemedy, File: cb.File, Batch: c})
			} else {
				cb.Commit = cm
			}
		}
		d.r.Committed = cb
		switch {
		case d.r.Planned != nil && c == d.r.Planned.ID:
			d.r.CommittedOffsets = d.r.Planned
		default:
			if _, ok := d.offsetFiles.find(c); ok {
				d.r.CommittedOffsets = d.readPlanned(c, SeverityWarning)
			}
		}
	}

	if e, ok := names["state"]; ok && e.IsDir {
		d.readState()
	}
	d.fillLeftovers()
	return true
}

// info returns e with its size and time, stat'ing it when the listing had names only.
// A failed stat leaves them zero; the read that follows reports the problem.
func (d *diagnoser) info(dir string, e storage.Entry) storage.Entry {
	if !e.ModTime.IsZero() {
		return e
	}
	if st, err := d.store.Stat(d.ctx, dir+e.Name); err == nil {
		st.Name = e.Name
		return st
	}
	return e
}

// fillLeftovers stats the leftovers found by name only; those gone since (an atomic write
// that finished) are dropped.
func (d *diagnoser) fillLeftovers() {
	kept := d.r.Leftovers[:0]
	for _, l := range d.r.Leftovers {
		if l.ModTime.IsZero() {
			st, err := d.store.Stat(d.ctx, l.Path)
			if storage.Class(err) == storage.ClassNotFound {
				continue
			}
			if err != nil {
				d.ioFailure("stat", l.Path, err)
				continue
			}
			l.Size, l.ModTime, l.Age = st.Size, st.ModTime, d.now.Sub(st.ModTime)
		}
		kept = append(kept, l)
	}
	d.r.Leftovers = kept
}

// readPlanned reads and parses offsets/<id>.
func (d *diagnoser) readPlanned(id int64, severity Severity) *PlannedBatch {
	e, _ := d.offsetFiles.find(id)
	e = d.info("offsets/", e)
	pb := &PlannedBatch{ID: id, File: "offsets/" + e.Name, Size: e.Size, ModTime: e.ModTime, PlannedAt: e.ModTime}
	data, ok := d.readFile(pb.File)
	if !ok {
		return pb
	}
	seq, err := ParseOffsets(pb.File, data)
	if err != nil {
		remedy := []Line{{Kind: LineOffsetsNoFallback}}
		if id == d.r.Offsets.Latest {
			remedy = append(remedy, Line{Kind: LineOffsetsRemedy, File: pb.File, Batch: id})
		}
		d.corrupt(err, severity, remedy...)
		return pb
	}
	pb.Offsets = seq
	if seq.HasMetadata && seq.Metadata.TimestampMs > 0 {
		pb.PlannedAt = time.UnixMilli(seq.Metadata.TimestampMs).UTC()
	}
	return pb
}

// batchFiles are the batch files of a log directory, by id.
type batchFiles []batchFile

type batchFile struct {
	id    int64
	entry storage.Entry
}

func (b batchFiles) find(id int64) (storage.Entry, bool) {
	i := sort.Search(len(b), func(i int) bool { return b[i].id >= id })
	if i < len(b) && b[i].id == id {
		return b[i].entry, true
	}
	return storage.Entry{}, false
}

// listLog lists a metadata log directory and indexes its batch files. This is the hot path
// of a large checkpoint (tens of thousands of names), so it avoids maps keyed by name.
func (d *diagnoser) listLog(dir string, present bool) (LogListing, batchFiles) {
	l := LogListing{Dir: dir, Present: present, First: -1, Latest: -1}
	if !present {
		return l, nil
	}
	entries, err := storage.ListNames(d.ctx, d.store, dir)
	if err != nil {
		if storage.Class(err) == storage.ClassNotFound {
			l.Present = false
			return l, nil
		}
		d.ioFailure("list", dir+"/", err)
		return l, nil
	}
	l.Readable = true
	files := make(batchFiles, 0, len(entries))
	var others []storage.Entry // checksums and temp files
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		if id, ok := ParseBatchID(e.Name); ok {
			files = append(files, batchFile{id, e})
			continue
		}
		switch {
		case IsChecksumFile(e.Name):
			l.Checksums++
			others = append(others, e)
		case IsTempFile(e.Name):
			l.TempFiles++
			others = append(others, e)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].id < files[j].id })
	// A name such as "007" parses like "7"; Spark would see both as batch 7. Keep the first.
	uniq := files[:0]
	for i, f := range files {
		if i == 0 || f.id != files[i-1].id {
			uniq = append(uniq, f)
		}
	}
	files = uniq
	// The checksum of a batch file is not left over; anything else is looked up by name.
	var names map[string]storage.Entry
	exists := func(name string) bool {
		if id, ok := ParseBatchID(name); ok {
			e, found := files.find(id)
			return found && e.Name == name
		}
		if names == nil {
			names = make(map[string]storage.Entry, len(others))
			for _, e := range entries {
				if _, isBatch := ParseBatchID(e.Name); !isBatch {
					names[e.Name] = e
				}
			}
		}
		_, ok := names[name]
		return ok
	}
	d.r.Leftovers = append(d.r.Leftovers, findLeftovers(d.now, dir+"/", others, exists)...)
	for _, f := range files {
		if f.entry.Size == 0 && !f.entry.ModTime.IsZero() { // only listings with sizes show empty files
			l.Empty = append(l.Empty, f.id)
		}
	}
	l.Batches = len(files)
	if len(files) > 0 {
		l.First, l.Latest = files[0].id, files[len(files)-1].id
		for i := 1; i < len(files); i++ {
			for id := files[i-1].id + 1; id < files[i].id && len(l.Gaps) < 20; id++ {
				l.Gaps = append(l.Gaps, id)
			}
			l.GapCount += int(files[i].id - files[i-1].id - 1)
		}
	}
	return l, files
}

// leftovers records the temp files and orphan checksums among a directory's entries.
func (d *diagnoser) leftovers(prefix string, entries []storage.Entry) {
	d.r.Leftovers = append(d.r.Leftovers, findLeftovers(d.now, prefix, entries, nil)...)
}

// findLeftovers returns the temp files and orphan checksums among entries. exists says
// whether a name is in the directory; nil means among entries.
func findLeftovers(now time.Time, prefix string, entries []storage.Entry, exists func(string) bool) []Leftover {
	var out []Leftover
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		var kind LeftoverKind
		switch {
		case IsChecksumFile(e.Name):
			if exists == nil {
				names := make(map[string]bool, len(entries))
				for _, e := range entries {
					names[e.Name] = true
				}
				exists = func(n string) bool { return names[n] }
			}
			if exists(CRCTarget(e.Name)) {
				continue
			}
			kind = LeftoverChecksum
			if IsTempFile(CRCTarget(e.Name)) {
				kind = LeftoverTemp // the checksum of a temp file whose data is gone
			}
		case IsTempFile(e.Name):
			kind = LeftoverTemp
		default:
			continue
		}
		l := Leftover{Path: prefix + e.Name, Kind: kind, Size: e.Size, ModTime: e.ModTime}
		if !e.ModTime.IsZero() {
			l.Age = now.Sub(e.ModTime)
		}
		out = append(out, l)
	}
	return out
}

// readState lists state/<op>/<part>[/<store>] and reads the operator metadata.
func (d *diagnoser) readState() {
	ops, err := storage.ListNames(d.ctx, d.store, "state")
	if err != nil {
		d.ioFailure("list", "state/", err)
		return
	}
	expected := int64(-1)
	if d.r.Committed != nil {
		expected = d.r.Committed.ID + 1
	}
	d.opMeta = map[int]*OperatorMetadata{}
	for _, opEntry := range ops {
		op, err := strconv.Atoi(opEntry.Name)
		if err != nil || !opEntry.IsDir || op < 0 {
			continue
		}
		dir := "state/" + opEntry.Name
		st := OperatorState{ID: op, Dir: dir + "/", ExpectedVersion: expected, MinVersion: -1, MaxVersion: -1}
		entries, err := storage.ListNames(d.ctx, d.store, dir)
		if err != nil {
			d.ioFailure("list", dir+"/", err)
			d.r.State = append(d.r.State, st)
			continue
		}
		var parts []int
		for _, e := range entries {
			if !e.IsDir {
				continue
			}
			if e.Name == "_metadata" {
				st.Metadata = d.readOperatorMetadata(dir + "/_metadata")
				continue
			}
			if p, err := strconv.Atoi(e.Name); err == nil && p >= 0 {
				parts = append(parts, p)
			}
		}
		sort.Ints(parts)
		st.Stores = d.scanPartitions(dir, parts, expected)
		for _, s := range st.Stores {
			if s.NewestVersion < 0 {
				continue
			}
			if st.MinVersion < 0 || s.NewestVersion < st.MinVersion {
				st.MinVersion = s.NewestVersion
			}
			st.MaxVersion = max(st.MaxVersion, s.NewestVersion)
		}
		d.r.State = append(d.r.State, st)
	}
}

func (d *diagnoser) readOperatorMetadata(dir string) *OperatorMetadata {
	entries, err := storage.ListNames(d.ctx, d.store, dir)
	if err != nil {
		d.ioFailure("list", dir+"/", err)
		return nil
	}
	name := ""
	for _, e := range entries {
		if e.Name == "metadata" && !e.IsDir {
			name = dir + "/metadata"
		}
	}
	if name == "" {
		for _, e := range entries {
			if e.Name == "v2" && e.IsDir {
				name = d.newestV2(dir + "/v2")
			}
		}
	}
	if name == "" {
		return nil
	}
	data, ok := d.readFile(name)
	if !ok {
		return nil
	}
	m, err := ParseOperatorMetadata(name, data)
	if err != nil {
		d.corrupt(err, SeverityWarning)
		return nil
	}
	return m
}

// newestV2 returns the newest state/<op>/_metadata/v2/<batchId> file, or "".
func (d *diagnoser) newestV2(dir string) string {
	entries, err := storage.ListNames(d.ctx, d.store, dir)
	if err != nil {
		d.ioFailure("list", dir+"/", err)
		return ""
	}
	best, name := int64(-1), ""
	for _, e := range entries {
		if id, ok := ParseBatchID(e.Name); ok && !e.IsDir && id > best {
			best, name = id, dir+"/"+e.Name
		}
	}
	return name
}

// notStoreDirs are directories inside a partition that are not join store directories.
var notStoreDirs = map[string]bool{"_metadata": true, "SSTs": true, "logs": true}

type partitionResult struct {
	stores    []StoreState
	leftovers []Leftover
	failures  []func()
}

// scanPartitions lists the partition directories of one operator, a few at a time.
func (d *diagnoser) scanPartitions(dir string, parts []int, expected int64) []StoreState {
	results := make([]partitionResult, len(parts))
	sem := make(chan struct{}, d.opts.Concurrency)
	var wg sync.WaitGroup
	for i, p := range parts {
		if d.ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = d.scanPartition(fmt.Sprintf("%s/%d", dir, p), p, expected)
		}()
	}
	wg.Wait()
	var stores []StoreState
	for _, res := range results {
		stores = append(stores, res.stores...)
		d.r.Leftovers = append(d.r.Leftovers, res.leftovers...)
		for _, f := range res.failures {
			f()
		}
	}
	return stores
}

func (d *diagnoser) scanPartition(dir string, p int, expected int64) partitionResult {
	var res partitionResult
	list := func(dir string) ([]storage.Entry, bool) {
		entries, err := storage.ListNames(d.ctx, d.store, dir)
		if err != nil {
			res.failures = append(res.failures, func() { d.ioFailure("list", dir+"/", err) })
			return nil, false
		}
		res.leftovers = append(res.leftovers, findLeftovers(d.now, dir+"/", entries, nil)...)
		return entries, true
	}
	entries, ok := list(dir)
	if !ok {
		res.stores = append(res.stores, StoreState{Partition: p, Store: "default", Dir: dir + "/", NewestVersion: -1, NewestSnapshot: -1})
		return res
	}
	def := summarizeStore(p, "default", dir+"/", entries, expected)
	var joined []StoreState
	for _, e := range entries {
		if !e.IsDir || notStoreDirs[e.Name] {
			continue
		}
		sub := dir + "/" + e.Name
		subEntries, ok := list(sub)
		if !ok {
			joined = append(joined, StoreState{Partition: p, Store: e.Name, Dir: sub + "/", NewestVersion: -1, NewestSnapshot: -1})
			continue
		}
		joined = append(joined, summarizeStore(p, e.Name, sub+"/", subEntries, expected))
	}
	if len(joined) == 0 || def.Files > 0 {
		res.stores = append(res.stores, def)
	}
	res.stores = append(res.stores, joined...)
	return res
}

func summarizeStore(p int, store, dir string, entries []storage.Entry, expected int64) StoreState {
	s := StoreState{Partition: p, Store: store, Dir: dir, NewestVersion: -1, NewestSnapshot: -1}
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		sf, ok := ParseStateFileName(e.Name)
		if !ok {
			continue
		}
		s.Files++
		full := sf.Kind == StateSnapshot || sf.Kind == StateZip
		if sf.Version > s.NewestVersion || (sf.Version == s.NewestVersion && full) {
			s.NewestVersion, s.NewestKind = sf.Version, sf.Kind
		}
		if full && sf.Version > s.NewestSnapshot {
			s.NewestSnapshot = sf.Version
		}
		if sf.UniqueID != "" && sf.Version == expected {
			s.IDsAtExpected = append(s.IDsAtExpected, sf.UniqueID)
		}
	}
	return s
}

// judge turns the facts into findings.
func (d *diagnoser) judge() {
	r := d.r
	d.versionHint()
	d.kafka()
	d.judgeCorruption()
	d.judgeBatches()
	d.judgeState()
	d.judgeLeftovers()
	d.judgeBrokers()
	for _, f := range r.Findings {
		if f.Severity >= SeverityWarning {
			return
		}
	}
	ev := []Line{}
	switch {
	case r.Committed != nil:
		ev = append(ev, Line{Kind: LineLatestCommit, File: r.Committed.File, At: r.Committed.ModTime, For: d.now.Sub(r.Committed.ModTime)})
	case r.Planned == nil:
		ev = append(ev, Line{Kind: LineNoBatchYet})
	}
	if r.InFlight != nil {
		ev = append(ev, Line{Kind: LineInFlight, Batch: r.InFlight.ID, For: r.InFlight.For})
	}
	if r.PendingKnown {
		l := Line{Kind: LinePending, N: r.PendingTotal}
		if r.WaitingFor >= 0 {
			l.Kind, l.For, l.Limit = LinePendingWaiting, r.WaitingFor, d.opts.StaleAfter
		}
		ev = append(ev, l)
	}
	d.add(Finding{Code: CodeOK, Severity: SeverityInfo, Summary: Line{Kind: LineConsistent}, Evidence: ev})
}

func (d *diagnoser) judgeCorruption() {
	r := d.r
	for _, l := range []LogListing{r.Offsets, r.Commits} {
		for _, id := range l.Empty {
			if id == l.Latest {
				continue // read and reported by the parser
			}
			d.add(Finding{Code: CodeCorruptFile, Severity: SeverityWarning, File: fmt.Sprintf("%s/%d", l.Dir, id), Problem: ProblemEmpty,
				Summary:  Line{Kind: LineEmpty, File: fmt.Sprintf("%s/%d", l.Dir, id)},
				Evidence: []Line{{Kind: LineNeverEmpty}, {Kind: LineEmptyFails}}})
		}
	}
	// Fewer source lines than sources: a truncated fragment.
	if p := r.Planned; p != nil && p.Offsets != nil {
		want, from := 0, ""
		if c := r.CommittedOffsets; c != nil && c != p && c.Offsets != nil && len(c.Offsets.Sources) > len(p.Offsets.Sources) {
			want, from = len(c.Offsets.Sources), c.File
		}
		if r.SourceDirs > len(p.Offsets.Sources) && r.SourceDirs > want {
			want, from = r.SourceDirs, "sources/"
		}
		if want > 0 {
			d.add(Finding{Code: CodeCorruptFile, Severity: SeverityCritical, File: p.File, Problem: ProblemTruncated,
				Summary: Line{Kind: LineFewerSources, File: p.File, N: int64(len(p.Offsets.Sources)), Target: from, M: int64(want)},
				Evidence: []Line{
					{Kind: LineTruncatedSources, File: p.File, N: int64(len(p.Offsets.Sources)), M: int64(want)},
					{Kind: LineSourcesRefused, N: int64(len(p.Offsets.Sources)), M: int64(want)},
				}})
		}
	}
}

func (d *diagnoser) judgeBatches() {
	r := d.r
	n, c := r.Offsets.Latest, r.Commits.Latest
	if r.Offsets.Readable && n > 0 {
		if _, ok := d.offsetFiles.find(n - 1); !ok {
			d.add(Finding{Code: CodeMissing, Severity: SeverityWarning, File: fmt.Sprintf("offsets/%d", n-1),
				Summary: Line{Kind: LineOffsetsMissing, File: fmt.Sprintf("offsets/%d", n-1), Batch: n},
				Evidence: []Line{
					{Kind: LineRestartReads, Batch: n},
					{Kind: LineExpectBatchMissing, Batch: n - 1},
				}})
		}
	}
	if r.Offsets.Readable && r.Commits.Readable && c >= 0 {
		if _, ok := d.offsetFiles.find(c); !ok {
			d.add(Finding{Code: CodeMissing, Severity: SeverityWarning, File: fmt.Sprintf("offsets/%d", c),
				Summary:  Line{Kind: LineCommitWithoutOffsets, Commit: c},
				Evidence: []Line{{Kind: LineLogsDamaged, Batch: n, Commit: c}}})
		}
	}

	if r.Planned != nil && d.commitsKnown && c < n {
		p := r.Planned
		r.InFlight = &InFlightBatch{ID: n, Since: p.PlannedAt}
		f := Finding{Code: CodeUncommittedBatch, Severity: SeverityInfo, File: p.File}
		switch {
		case p.PlannedAt.IsZero(): // neither readable nor stat-able: reported as such already
			f.Severity = SeverityWarning
			f.Summary = Line{Kind: LineUncommittedUnknown, Batch: n}
		case d.now.Sub(p.PlannedAt) > d.opts.StaleAfter:
			r.InFlight.For = d.now.Sub(p.PlannedAt)
			f.Severity = SeverityCritical
			f.Summary = Line{Kind: LineNeverCommitted, Batch: n, For: r.InFlight.For}
		default:
			r.InFlight.For = d.now.Sub(p.PlannedAt)
			f.Summary = Line{Kind: LineInFlightFor, Batch: n, For: r.InFlight.For}
		}
		f.Evidence = append(f.Evidence, Line{Kind: LinePlannedAbsent, File: p.File, At: p.PlannedAt, For: r.InFlight.For, Batch: n})
		switch {
		case !r.Commits.Present:
			f.Evidence = append(f.Evidence, Line{Kind: LineNoCommitsDir})
			if p.Offsets != nil && p.Offsets.HasMetadata && p.Offsets.Metadata.Conf == nil {
				f.Evidence = append(f.Evidence, Line{Kind: LineNoConf})
			}
		case c < 0:
			f.Evidence = append(f.Evidence, Line{Kind: LineCommitsEmpty})
		case c < n-1:
			f.Evidence = append(f.Evidence, Line{Kind: LineCommitsBehind, Batch: n, Commit: c})
		}
		f.Evidence = append(f.Evidence, Line{Kind: LineRerun, Batch: n})
		if r.InFlight.For > d.opts.StaleAfter {
			f.Evidence = append(f.Evidence, Line{Kind: LineLongerThanStale, Limit: d.opts.StaleAfter})
		}
		d.add(f)
	}

	r.WaitingFor = -1
	if cb := r.Committed; cb != nil {
		committedAt := cb.ModTime
		if committedAt.IsZero() && r.CommittedOffsets != nil {
			committedAt = r.CommittedOffsets.PlannedAt
		}
		since := d.now.Sub(committedAt)
		waiting := r.PendingKnown && r.PendingTotal > 0
		// The stall clock counts from the later of the newest commit and the arrival of the
		// oldest waiting record: a quiet topic's idle hours are no stall.
		waited := since
		if waiting && d.opts.WaitingSince.After(committedAt) {
			waited = max(d.now.Sub(d.opts.WaitingSince), 0)
		}
		if waiting && !committedAt.IsZero() {
			r.WaitingFor = waited
		}
		if !committedAt.IsZero() && since > d.opts.StaleAfter && (!waiting || waited > d.opts.StaleAfter) {
			f := Finding{Code: CodeStale, Severity: SeverityWarning, File: cb.File,
				Summary: Line{Kind: LineNoCommitFor, For: since, Limit: d.opts.StaleAfter},
				Evidence: []Line{
					{Kind: LineLatestCommit, File: cb.File, At: committedAt, For: since},
				}}
			if r.CommittedOffsets != nil {
				f.Evidence = append(f.Evidence, Line{Kind: LineBatchPlanned, Batch: cb.ID, At: r.CommittedOffsets.PlannedAt})
			}
			switch {
			case waiting:
				f.Severity = SeverityCritical
				f.Summary = Line{Kind: LineRecordsWaited, N: r.PendingTotal, For: waited, Limit: d.opts.StaleAfter}
				if waited < since {
					f.Evidence = append(f.Evidence, Line{Kind: LineOldestWaiting, At: d.opts.WaitingSince, For: waited})
				}
				f.Evidence = append(f.Evidence, Line{Kind: LineStalled, N: r.PendingTotal})
			case r.PendingKnown:
				f.Evidence = append(f.Evidence, Line{Kind: LineIdle})
			}
			d.add(f)
		}
	}
}

// judgeBrokers reports what the brokers no longer hold, or hold beyond what the checkpoint
// knows: offsets retention deleted before the query read them, partitions it does not know,
// partitions that are gone.
func (d *diagnoser) judgeBrokers() {
	r := d.r
	var lost, unknown, gone []Line
	for _, k := range r.Kafka {
		switch k.Note {
		case NoteOffsetsGone:
			lost = append(lost, Line{Kind: LineDeletedUnread, Topic: k.Topic, Partition: k.Partition, M: k.LogStart - k.Lost, N: k.Lost})
		case NoteNotInCheckpoint:
			unknown = append(unknown, Line{Kind: LineUnknownPartition, Topic: k.Topic, Partition: k.Partition, N: k.LogStart, M: k.LogEnd})
		case NotePartitionGone:
			gone = append(gone, Line{Kind: LinePartition, Topic: k.Topic, Partition: k.Partition})
		}
	}
	file := ""
	if r.CommittedOffsets != nil {
		file = r.CommittedOffsets.File
	} else if r.Planned != nil {
		file = r.Planned.File
	}
	if len(lost) > 0 {
		d.add(Finding{Code: CodeOffsetsGone, Severity: SeverityCritical, File: file,
			Summary:  Line{Kind: LineOffsetsGone, N: r.LostRecords, M: int64(r.LostPartitions)},
			Evidence: limitLines(lost, 10)})
	}
	if len(unknown) > 0 {
		d.add(Finding{Code: CodeUnknownPartition, Severity: SeverityWarning, File: file,
			Summary:  Line{Kind: LineUnknownPartitions, N: r.UnknownRecords, M: int64(r.UnknownPartitions)},
			Evidence: limitLines(unknown, 10)})
	}
	if len(gone) > 0 {
		d.add(Finding{Code: CodePartitionGone, Severity: SeverityWarning, File: file,
			Summary:  Line{Kind: LinePartitionsGone, M: int64(len(gone))},
			Evidence: limitLines(gone, 10)})
	}
}

func (d *diagnoser) judgeState() {
	r := d.r
	if r.Committed == nil {
		return
	}
	c := r.Committed.ID
	for i := range r.State {
		op := &r.State[i]
		op.ExpectedPartitions = d.expectedPartitions(op)
		var lines []Line
		behind := 0
		seen := map[int]bool{}
		for _, s := range op.Stores {
			seen[s.Partition] = true
			if s.NewestVersion < op.ExpectedVersion {
				behind++
				if s.NewestVersion < 0 {
					lines = append(lines, Line{Kind: LineNoStateFiles, File: s.Dir, Want: op.ExpectedVersion, Commit: c})
				} else {
					lines = append(lines, Line{Kind: LineStateOld, File: s.Dir, Version: s.NewestVersion, State: s.NewestKind, Want: op.ExpectedVersion, Commit: c})
				}
			}
		}
		var missing []int
		for p := 0; p < op.ExpectedPartitions; p++ {
			if !seen[p] {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			lines = append(lines, Line{Kind: LinePartitionDirsMissing, File: op.Dir, N: int64(len(missing)), M: int64(op.ExpectedPartitions), Missing: missing[:min(len(missing), 10)]})
		}
		// Format v2: the ids named in commits/C must exist as files of version C+1.
		if cm := r.Committed.Commit; cm != nil {
			for p, ids := range cm.StateUniqueIDs[strconv.Itoa(op.ID)] {
				have := map[string]bool{}
				for _, s := range op.Stores {
					if s.Partition == p {
						for _, id := range s.IDsAtExpected {
							have[id] = true
						}
					}
				}
				if !seen[p] {
					continue // already reported as missing
				}
				for _, id := range ids {
					if !have[id] {
						lines = append(lines, Line{Kind: LineUniqueIDMissing, File: strings.TrimSuffix(op.Dir, "/"), Partition: int32(p), Version: op.ExpectedVersion, UniqueID: id, Commit: c})
					}
				}
			}
		}
		if len(lines) == 0 {
			continue
		}
		name := ""
		if op.Metadata != nil {
			name = op.Metadata.Operator.Name
		}
		f := Finding{Code: CodeStateBehind, Severity: SeverityCritical, File: op.Dir,
			Summary: Line{Kind: LineStateBehind, Operator: op.ID, Name: name, Commit: c, N: int64(behind + len(missing)), M: int64(len(op.Stores) + len(missing)), Version: op.ExpectedVersion},
		}
		if behind+len(missing) == 0 {
			f.Summary = Line{Kind: LineStateLacksFiles, Operator: op.ID, Name: name, Commit: c}
		}
		f.Evidence = append(limitLines(lines, 10), Line{Kind: LineStateRule}, Line{Kind: LineExpectStateError})
		d.add(f)
	}
}

func (d *diagnoser) expectedPartitions(op *OperatorState) int {
	n := 0
	if op.Metadata != nil {
		for _, s := range op.Metadata.Stores {
			n = max(n, s.NumPartitions)
		}
	}
	if n > 0 {
		return n
	}
	for _, pb := range []*PlannedBatch{d.r.CommittedOffsets, d.r.Planned} {
		if pb != nil && pb.Offsets != nil {
			if v, err := strconv.Atoi(pb.Offsets.Metadata.Conf["spark.sql.shuffle.partitions"]); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}

func (d *diagnoser) judgeLeftovers() {
	groups := map[string][]Leftover{}
	var order []string
	for _, l := range d.r.Leftovers {
		if l.Age < d.opts.TempFileAge {
			continue
		}
		area, _, _ := strings.Cut(l.Path, "/")
		if !strings.Contains(l.Path, "/") {
			area = ""
		}
		if _, ok := groups[area]; !ok {
			order = append(order, area)
		}
		groups[area] = append(groups[area], l)
	}
	for _, area := range order {
		ls := groups[area]
		var lines []Line
		for _, l := range ls {
			switch l.Kind {
			case LeftoverChecksum:
				target := l.Path[:strings.LastIndexByte(l.Path, '/')+1] + CRCTarget(l.Path[strings.LastIndexByte(l.Path, '/')+1:])
				lines = append(lines, Line{Kind: LineOrphanChecksum, File: l.Path, For: l.Age, Target: target})
			default:
				lines = append(lines, Line{Kind: LineTempFile, File: l.Path, N: l.Size, For: l.Age})
			}
		}
		where := ""
		if area != "" {
			where = area + "/"
		}
		d.add(Finding{Code: CodeTempFilesLeft, Severity: SeverityWarning, File: ls[0].Path,
			Summary:  Line{Kind: LineLeftovers, N: int64(len(ls)), File: where, Limit: d.opts.TempFileAge},
			Evidence: limitLines(lines, 10)})
	}
}

// kafka lines up the Kafka offsets of the latest planned and committed batches with the
// brokers' log-end offsets.
func (d *diagnoser) kafka() {
	r := d.r
	type key struct {
		src   int
		topic string
		part  int32
	}
	rows := map[key]*KafkaPartition{}
	get := func(k key) *KafkaPartition {
		if row, ok := rows[k]; ok {
			return row
		}
		row := &KafkaPartition{Source: k.src, Topic: k.topic, Partition: k.part, Committed: -1, Planned: -1, LogEnd: -1}
		rows[k] = row
		return row
	}
	sourceOf := map[string]int{}
	collect := func(pb *PlannedBatch, set func(*KafkaPartition, int64)) {
		if pb == nil || pb.Offsets == nil {
			return
		}
		for _, s := range pb.Offsets.Sources {
			for topic, parts := range s.Kafka {
				sourceOf[topic] = s.Index
				for p, off := range parts {
					set(get(key{s.Index, topic, p}), off)
				}
			}
		}
	}
	collect(r.Planned, func(row *KafkaPartition, off int64) { row.Planned = off })
	collect(r.CommittedOffsets, func(row *KafkaPartition, off int64) { row.Committed = off })
	if len(rows) == 0 {
		return
	}
	baselineCommitted := r.CommittedOffsets != nil && r.CommittedOffsets.Offsets != nil
	switch {
	case baselineCommitted:
		r.KafkaBaseline, r.BaselineKind = r.CommittedOffsets.File, BaselineCommitted
	case r.Planned != nil && r.Committed != nil:
		r.KafkaBaseline, r.BaselineKind = r.Planned.File, BaselineCommitUnread
	case r.Planned != nil:
		r.KafkaBaseline, r.BaselineKind = r.Planned.File, BaselineNoCommit
	}
	unknown := map[key]bool{}
	for topic, parts := range d.opts.LogEndOffsets {
		src, ok := sourceOf[topic]
		if !ok {
			continue // a topic this checkpoint does not read
		}
		for p, end := range parts {
			k := key{src, topic, p}
			_, known := rows[k]
			row := get(k)
			row.LogEnd = end
			if !known {
				unknown[k] = true
				row.Note = NoteNotInCheckpoint
			}
		}
	}
	for k, row := range rows {
		row.LogStart = -1
		if start, ok := d.opts.LogStartOffsets[row.Topic][row.Partition]; ok {
			row.LogStart = start
		}
		if unknown[k] {
			// Spark reads a partition it has no offset for from its earliest record.
			r.UnknownPartitions++
			if row.LogEnd >= 0 && row.LogStart >= 0 {
				r.UnknownRecords += max(row.LogEnd-row.LogStart, 0)
			}
			continue
		}
		base := row.Planned
		if baselineCommitted {
			base = row.Committed
		}
		brokerParts, topicKnown := d.opts.LogEndOffsets[row.Topic]
		switch {
		case !topicKnown:
		case row.LogEnd < 0:
			if _, ok := brokerParts[row.Partition]; !ok {
				row.Note = NotePartitionGone
				r.GonePartitions++
			}
		case base >= 0:
			from := base
			if row.LogStart > base && base <= row.LogEnd {
				// Retention deleted records the query never read: they no longer wait.
				row.Lost = row.LogStart - base
				r.LostRecords += row.Lost
				r.LostPartitions++
				from = row.LogStart
				row.Note = NoteOffsetsGone
			}
			row.Pending, row.PendingKnown = row.LogEnd-from, true
			r.PendingKnown = true
			if row.Pending < 0 {
				row.Note = NoteAheadOfBroker
			} else {
				r.PendingTotal += row.Pending
			}
		}
	}
	for _, row := range rows {
		r.Kafka = append(r.Kafka, *row)
	}
	sort.Slice(r.Kafka, func(i, j int) bool {
		a, b := r.Kafka[i], r.Kafka[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
}

func (d *diagnoser) versionHint() {
	r := d.r
	var hints []Hint
	if r.Committed != nil && r.Committed.Commit != nil && r.Committed.Commit.Version >= 2 {
		hints = append(hints, HintCommitsV2)
	}
	for _, op := range r.State {
		if op.Metadata != nil {
			if op.Metadata.Version >= 2 {
				hints = append(hints, HintOperatorV2)
			} else {
				hints = append(hints, HintOperatorV1)
			}
			break
		}
	}
	if p := r.Planned; p != nil && p.Offsets != nil {
		switch {
		case p.Offsets.Version >= 2:
			hints = append(hints, HintOffsetsV2)
		case p.Offsets.HasMetadata && p.Offsets.Metadata.Conf == nil:
			hints = append(hints, HintOffsetsNoConf)
		case p.Offsets.Metadata.Conf["spark.sql.streaming.stateStore.encodingFormat"] != "":
			hints = append(hints, HintEncodingFormatSet)
		}
	}
	r.Hints = hints
}

// limitLines keeps the first n lines and says how many more there were.
func limitLines(lines []Line, n int) []Line {
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n:n], Line{Kind: LineMore, N: int64(len(lines) - n)})
}
