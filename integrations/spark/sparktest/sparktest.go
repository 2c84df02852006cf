// Package sparktest writes Spark Structured Streaming checkpoints for tests, in the format of
// docs/spark-checkpoint-format.md: metadata, offsets/, commits/, state/ with the file names,
// contents and modification times a Spark run would leave, plus whatever damage a test asks for.
package sparktest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultQueryID is the query id written when Spec.QueryID is empty.
const DefaultQueryID = "5f1c0d2e-7a3b-4c5d-9e8f-0a1b2c3d4e5f"

// DefaultStart is when the first batch is planned when Spec.Start is zero.
var DefaultStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Spec describes a checkpoint. Batches FirstBatch..LatestBatch are planned (offsets/) and
// FirstBatch..LatestCommit committed (commits/); set LatestCommit to -1 for none.
type Spec struct {
	QueryID    string // "" means DefaultQueryID
	NoMetadata bool   // leave out the metadata file

	Start       time.Time     // when FirstBatch was planned; zero means DefaultStart
	Interval    time.Duration // between batches; 0 means 1m
	CommitDelay time.Duration // from planning a batch to its commit; 0 means Interval/2

	FirstBatch   int64 // the first retained batch (older ones were purged)
	LatestBatch  int64 // the latest offsets/N; -1 leaves out offsets/
	LatestCommit int64 // the latest commits/N; -1 for none
	NoCommitsDir bool  // with no commit, leave out commits/ itself (Spark 2.1.0)

	// Topics make the query read Kafka; nil makes it read a MemoryStream (integer offsets).
	Topics []Topic
	// Conf is the offsets' conf map; nil means spark.sql.shuffle.partitions (State.Partitions
	// or 5) and the HDFS provider class. NoConf leaves the map out, as Spark 2.1.0 did.
	Conf   map[string]string
	NoConf bool

	CommitVersion int    // 1 (default) or 2 (stateUniqueIds, RocksDB checkpoint format v2)
	State         *State // nil: a stateless query

	Checksums bool // write .<name>.crc sidecars as Hadoop's local filesystem does

	Files    map[string]string    // written last, relative to the root: extra or replacement files
	ModTimes map[string]time.Time // modification times, applied last
	Remove   []string             // removed last
}

// Topic is a Kafka topic the query reads; after batch b every partition's next offset is
// (b+1)*RecordsPerBatch.
type Topic struct {
	Name            string
	Partitions      int
	RecordsPerBatch int64
}

// OffsetAfter is the next offset to read in every partition after batch b.
func (t Topic) OffsetAfter(b int64) int64 { return (b + 1) * t.RecordsPerBatch }

// Provider is a state store provider.
type Provider string

// The providers.
const (
	HDFS    Provider = "hdfs"    // <v>.delta, <v>.snapshot
	RocksDB Provider = "rocksdb" // <v>.zip (or <v>_<id>.changelog with CommitVersion 2)
)

// State describes state/: every partition holds versions up to LatestCommit+1 unless Behind
// says otherwise.
type State struct {
	Operators         int      // 0 means 1
	OperatorName      string   // written to state/<op>/_metadata/metadata when Metadata is set
	Metadata          bool     // write operator metadata v1
	Partitions        int      // per operator
	Provider          Provider // "" means HDFS
	Retained          int      // versions kept per store; 0 means 3
	Stores            []string // join store directories; nil: the default store
	Behind            map[int]int64
	MissingPartitions []int
}

func (s *Spec) defaults() {
	if s.QueryID == "" {
		s.QueryID = DefaultQueryID
	}
	if s.Start.IsZero() {
		s.Start = DefaultStart
	}
	if s.Interval == 0 {
		s.Interval = time.Minute
	}
	if s.CommitDelay == 0 {
		s.CommitDelay = s.Interval / 2
	}
	if s.CommitVersion == 0 {
		s.CommitVersion = 1
	}
}

// PlannedAt is when batch id was planned (its batchTimestampMs and its offsets file's mtime).
func (s Spec) PlannedAt(id int64) time.Time {
	s.defaults()
	return s.Start.Add(time.Duration(id-s.FirstBatch) * s.Interval)
}

// CommittedAt is the modification time of commits/<id>.
func (s Spec) CommittedAt(id int64) time.Time {
	s.defaults()
	return s.PlannedAt(id).Add(s.CommitDelay)
}

// UniqueID is the state-store unique id the generator uses for a store version (checkpoint
// format v2): commits/<version-1> names it, and the file is <version>_<id>.changelog.
func UniqueID(op, partition, store int, version int64) string {
	h := fnv.New128a()
	fmt.Fprintf(h, "%d/%d/%d/%d", op, partition, store, version)
	b := h.Sum(nil)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// File is one file or directory of a generated checkpoint.
type File struct {
	Path    string // slash-separated, relative to the checkpoint root
	Dir     bool
	Data    []byte
	ModTime time.Time
}

// layout collects files in order; a later write of a path replaces the earlier one.
type layout struct {
	checksums bool
	index     map[string]int
	files     []File
}

func (l *layout) add(f File) {
	if i, ok := l.index[f.Path]; ok {
		l.files[i] = f
		return
	}
	l.index[f.Path] = len(l.files)
	l.files = append(l.files, f)
}

func (l *layout) write(rel, content string, mtime time.Time) {
	l.add(File{Path: rel, Data: []byte(content), ModTime: mtime})
	if l.checksums {
		dir, base := path.Split(rel)
		l.add(File{Path: dir + "." + base + ".crc", Data: []byte("crc\x00\x00\x00\x02\x00"), ModTime: mtime})
	}
}

func (l *layout) mkdir(rel string) { l.add(File{Path: rel, Dir: true}) }

// WriteCheckpoint writes the checkpoint spec describes into dir (created if needed).
func WriteCheckpoint(dir string, spec Spec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write test checkpoint %s: %w", dir, err)
	}
	for _, f := range Layout(spec) {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if f.Dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return fmt.Errorf("write test checkpoint %s: %w", dir, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write test checkpoint %s: %w", dir, err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return fmt.Errorf("write test checkpoint %s: %w", dir, err)
		}
		if err := os.Chtimes(p, f.ModTime, f.ModTime); err != nil {
			return fmt.Errorf("write test checkpoint %s: %w", dir, err)
		}
	}
	return nil
}

// Layout lists the files and directories of the checkpoint spec describes, parents before
// children, for writing into any store (e.g. storagetest.MemStore.Put).
func Layout(spec Spec) []File {
	spec.defaults()
	w := &layout{checksums: spec.Checksums, index: map[string]int{}}
	if !spec.NoMetadata {
		w.write("metadata", fmt.Sprintf(`{"id":"%s"}`, spec.QueryID), spec.Start)
	}
	partitions := 5
	if spec.State != nil && spec.State.Partitions > 0 {
		partitions = spec.State.Partitions
	}
	conf := spec.Conf
	if conf == nil {
		provider := "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
		if spec.State != nil && spec.State.Provider == RocksDB {
			provider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
		}
		conf = map[string]string{
			"spark.sql.shuffle.partitions":                 strconv.Itoa(partitions),
			"spark.sql.streaming.stateStore.providerClass": provider,
		}
	}
	confJSON, _ := json.Marshal(conf)
	if spec.LatestBatch >= 0 {
		w.mkdir("offsets")
		for id := spec.FirstBatch; id <= spec.LatestBatch; id++ {
			w.write(fmt.Sprintf("offsets/%d", id), offsetsFile(spec, confJSON, id), spec.PlannedAt(id))
		}
	}
	if spec.LatestCommit >= 0 || !spec.NoCommitsDir {
		w.mkdir("commits")
	}
	for id := spec.FirstBatch; id <= spec.LatestCommit; id++ {
		w.write(fmt.Sprintf("commits/%d", id), commitFile(spec, id), spec.CommittedAt(id))
	}
	if len(spec.Topics) > 0 {
		w.mkdir("sources/0")
	}
	if spec.State != nil {
		writeState(w, spec)
	}
	latest := spec.PlannedAt(max(spec.LatestBatch, spec.FirstBatch))
	w.checksums = false // Files are exactly what the test asked for
	for _, rel := range sortedKeys(spec.Files) {
		w.write(rel, spec.Files[rel], latest)
	}
	for _, rel := range spec.Remove {
		for p := range w.index {
			if p == rel || strings.HasPrefix(p, rel+"/") {
				w.files[w.index[p]].Path = ""
			}
		}
	}
	for rel, t := range spec.ModTimes {
		if i, ok := w.index[rel]; ok {
			w.files[i].ModTime = t
		}
	}
	out := make([]File, 0, len(w.files))
	for _, f := range w.files {
		if f.Path != "" {
			out = append(out, f)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func offsetsFile(spec Spec, confJSON []byte, id int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":%d", spec.PlannedAt(id).UnixMilli())
	if !spec.NoConf {
		fmt.Fprintf(&b, ",\"conf\":%s", confJSON)
	}
	b.WriteString("}\n")
	if len(spec.Topics) == 0 {
		fmt.Fprintf(&b, "%d", id)
		return b.String()
	}
	// {"topic":{"0":n,...},...}, written by hand: this runs for every batch of large checkpoints.
	b.WriteByte('{')
	for i, t := range spec.Topics {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(t.Name)
		b.Write(name)
		b.WriteString(":{")
		for p := range t.Partitions {
			if p > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "\"%d\":%d", p, t.OffsetAfter(id))
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.String()
}

func commitFile(spec Spec, id int64) string {
	if spec.CommitVersion < 2 || spec.State == nil {
		return fmt.Sprintf("v%d\n{\"nextBatchWatermarkMs\":0}", spec.CommitVersion)
	}
	st := spec.State
	ids := map[string][][]string{}
	for op := range max(st.Operators, 1) {
		var parts [][]string
		for p := range st.Partitions {
			var stores []string
			for s := range max(len(st.Stores), 1) {
				stores = append(stores, UniqueID(op, p, s, id+1))
			}
			parts = append(parts, stores)
		}
		ids[strconv.Itoa(op)] = parts
	}
	body, _ := json.Marshal(map[string]any{"nextBatchWatermarkMs": 0, "stateUniqueIds": ids})
	return fmt.Sprintf("v2\n%s", body)
}

func writeState(w *layout, spec Spec) {
	st := spec.State
	retained := st.Retained
	if retained <= 0 {
		retained = 3
	}
	missing := map[int]bool{}
	for _, p := range st.MissingPartitions {
		missing[p] = true
	}
	stores := st.Stores
	if len(stores) == 0 {
		stores = []string{""}
	}
	for op := range max(st.Operators, 1) {
		opDir := fmt.Sprintf("state/%d", op)
		w.mkdir(opDir)
		if st.Metadata {
			name := st.OperatorName
			if name == "" {
				name = "stateStoreSave"
			}
			var infos []string
			for _, s := range stores {
				if s == "" {
					s = "default"
				}
				infos = append(infos, fmt.Sprintf(`{"storeName":"%s","numColsPrefixKey":0,"numPartitions":%d}`, s, st.Partitions))
			}
			w.write(opDir+"/_metadata/metadata", fmt.Sprintf(`v1
{"operatorInfo":{"operatorId":%d,"operatorName":"%s"},"stateStoreInfo":[%s]}`, op, name, strings.Join(infos, ",")), spec.Start)
		}
		for p := range st.Partitions {
			if missing[p] {
				continue
			}
			newest := spec.LatestCommit + 1 - st.Behind[p]
			for si, store := range stores {
				dir := fmt.Sprintf("%s/%d", opDir, p)
				if store != "" {
					dir += "/" + store
				}
				w.mkdir(dir)
				for v := max(1, newest-int64(retained)+1); v <= newest; v++ {
					mtime := spec.CommittedAt(v - 1)
					for _, name := range stateFileNames(spec, st, op, p, si, v) {
						w.write(dir+"/"+name, "state", mtime)
					}
				}
			}
		}
	}
}

func stateFileNames(spec Spec, st *State, op, p, si int, v int64) []string {
	switch {
	case st.Provider == RocksDB && spec.CommitVersion >= 2:
		id := UniqueID(op, p, si, v)
		names := []string{fmt.Sprintf("%d_%s.changelog", v, id)}
		if v%10 == 0 {
			names = append(names, fmt.Sprintf("%d_%s.zip", v, id))
		}
		return names
	case st.Provider == RocksDB:
		return []string{fmt.Sprintf("%d.zip", v)}
	default:
		names := []string{fmt.Sprintf("%d.delta", v)}
		if v%10 == 0 {
			names = append(names, fmt.Sprintf("%d.snapshot", v))
		}
		return names
	}
}

// AppendBatch plans and commits batch id of a running query, as Spark's checkpoint file
// manager does: offsets/<id> with the Kafka offsets read up to (topic → partition → next
// offset), then commits/<id>, each written to a temporary name and renamed into place.
func AppendBatch(dir string, id int64, offsets map[string]map[int32]int64, at time.Time) error {
	src := map[string]map[string]int64{}
	for topic, parts := range offsets {
		src[topic] = map[string]int64{}
		for p, o := range parts {
			src[topic][strconv.Itoa(int(p))] = o
		}
	}
	body, err := json.Marshal(src)
	if err != nil {
		return err
	}
	planned := fmt.Sprintf("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":%d,\"conf\":{\"spark.sql.shuffle.partitions\":\"5\"}}\n%s", at.UnixMilli(), body)
	for _, f := range []struct{ sub, data string }{{"offsets", planned}, {"commits", "v1\n{\"nextBatchWatermarkMs\":0}"}} {
		tmp := filepath.Join(dir, f.sub, fmt.Sprintf(".%d.%d.tmp", id, at.UnixNano()))
		if err := os.WriteFile(tmp, []byte(f.data), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, f.sub, strconv.FormatInt(id, 10))); err != nil {
			return err
		}
	}
	return nil
}
