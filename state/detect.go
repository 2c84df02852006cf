package state

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Detection: what streamwatch finds on its own sampling rounds, the incidents it
// opens from that, and one incident per pipeline symptom.
//
// Correlation (alerts.correlate_pipeline) is an index per pipeline, P:pipe:<pipeline>, kept by
// the record script: "sw" names the open incident streamwatch opened for the pipeline (its
// source is detect or probe), "alert" the oldest open incident an alert opened. A new key of
// the pipeline (no open incident of its own) joins one of them instead of opening another: an
// alert joins the one streamwatch opened; streamwatch's own symptom joins either. The join
// maps the key to that incident (later duplicates and its resolution go there), and is in the
// incident's timeline and thread with its reason. An entry whose incident closed is ignored,
// so closing needs no bookkeeping.
//
// A detection incident's root names the symptom with its numbers (the incident's "detect"
// field); every round edits the root (KindUpdate), never the thread. Recovery posts once in
// the thread and, when streamwatch opened the incident, nobody acknowledged it and every alert
// that joined it resolved, queues its resolution with the deliverer's auto-resolve pass; an
// alert that resolves later does the same (detect_done in the record script).

// Source names streamwatch's own incidents use in AlertRecord.Source.
const (
	SourceDetect = "detect"
	SourceProbe  = "probe"
	// SourceHeartbeat opens the incident of an expected alert that stopped (heartbeat/).
	SourceHeartbeat = "heartbeat"
)

// maxJoinedNames is how many joined alerts an incident names (by title) in its recovery note;
// the others are counted.
const maxJoinedNames = 20

// DetectRecord is what detection keeps of a pipeline between rounds, as the pipeline package
// encodes it: its state (hysteresis, incident), its last observation (the progress metrics,
// `status`) and publish_group's state.
type DetectRecord struct {
	Round       int64 // Unix ms of the round that wrote it
	State       []byte
	Observation []byte
	Publish     []byte
}

func (s *Store) detectKey(pipeline string) string { return s.key("detect", pipeline) }

// SaveDetectRecord stores a pipeline's detection record; false means a later round's record is
// there already and this one was dropped.
func (s *Store) SaveDetectRecord(ctx context.Context, pipeline string, r DetectRecord) (bool, error) {
	res, err := s.one(s.run(ctx, saveDetectScript, []string{s.detectKey(pipeline)}, r.Round, r.State, r.Observation, r.Publish).Result())
	if err != nil {
		return false, wrap("save detection of "+pipeline, err)
	}
	return res.str(0, "written") == "1", nil
}

// DetectRecords returns the stored detection records of pipelines (absent when none is stored).
func (s *Store) DetectRecords(ctx context.Context, pipelines ...string) (map[string]DetectRecord, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(pipelines))
	for i, p := range pipelines {
		cmds[i] = pipe.HGetAll(ctx, s.detectKey(p))
	}
	if len(pipelines) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, wrap("read detection", err)
		}
	}
	out := make(map[string]DetectRecord, len(pipelines))
	for i, p := range pipelines {
		h := cmds[i].Val()
		if len(h) == 0 {
			continue
		}
		round, _ := strconv.ParseInt(h["round"], 10, 64)
		out[p] = DetectRecord{Round: round, State: []byte(h["state"]), Observation: []byte(h["obs"]), Publish: []byte(h["publish"])}
	}
	return out, nil
}

// DetectRecord returns one pipeline's detection record (zero when none is stored).
func (s *Store) DetectRecord(ctx context.Context, pipeline string) (DetectRecord, error) {
	m, err := s.DetectRecords(ctx, pipeline)
	return m[pipeline], err
}

// DetectUpdate says what became of an incident detection updates.
type DetectUpdate struct {
	Status string // open, acknowledged, resolved; "" when the incident no longer exists
	// MergedInto is the incident it was merged into, when it was.
	MergedInto string
	// Edited is true when the root's symptom changed and an edit of the root was queued.
	Edited bool
}

// NoteDetected posts detection's news (ev "detected") in incident id's thread, or, while the
// incident is silenced, with the update that goes out when the silence ends. A resolved
// incident is left alone.
func (s *Store) NoteDetected(ctx context.Context, id, ev, detail string) error {
	_, err := s.one(s.run(ctx, noteDetectScript, []string{s.base}, NormalizeID(id), ev, detail, ms(s.now())).Result())
	return wrap("note on "+id, err)
}

// UpdateDetected shows line (the symptom with its numbers) on an incident's root, and title
// as its title unless title is empty; the root is edited, the thread left alone.
func (s *Store) UpdateDetected(ctx context.Context, id, line, title string) (DetectUpdate, error) {
	res, err := s.one(s.run(ctx, updateDetectScript, []string{s.base}, NormalizeID(id), line, title, ms(s.now())).Result())
	if err != nil {
		return DetectUpdate{}, wrap("update "+id, err)
	}
	return DetectUpdate{Status: res.str(0, "status"), MergedInto: res.str(0, "merged_into"), Edited: res.str(0, "edited") == "1"}, nil
}

// Recovery says what recovering an incident did.
type Recovery struct {
	Status     string // the incident's status before; "" when it no longer exists
	MergedInto string
	// Resolves is true when the incident is to resolve now: streamwatch opened it, nobody
	// acknowledged it, no alert still fires.
	Resolves bool
	// Firing counts the alerts that still fire; Names are the titles of those that joined.
	Firing int
	Names  []string
}

// RecoverDetected records that the symptom of incident id recovered: detection's alert
// (fingerprint) resolves, note goes into the thread once, and the incident resolves when
// streamwatch opened it, nobody acknowledged it and no alert still fires (through the
// deliverer's auto-resolve pass, within a second).
func (s *Store) RecoverDetected(ctx context.Context, id, fingerprint, note string) (Recovery, error) {
	res, err := s.one(s.run(ctx, recoverDetectScript, []string{s.base}, NormalizeID(id), fingerprint, note, ms(s.now())).Result())
	if err != nil {
		return Recovery{}, wrap("recover "+id, err)
	}
	r := Recovery{Status: res.str(0, "status"), MergedInto: res.str(0, "merged_into"), Resolves: res.str(0, "resolves") == "1",
		Firing: int(res.int(0, "firing"))}
	_ = json.Unmarshal([]byte(res.str(0, "names")), &r.Names)
	return r, nil
}

// PipelineIncident is the open incident the correlation index names for a pipeline: the one
// streamwatch opened, else the alert's; "" when none is open.
func (s *Store) PipelineIncident(ctx context.Context, pipeline string) (string, error) {
	ids, err := s.rdb.HMGet(ctx, s.key("pipe", pipeline), "sw", "alert").Result()
	if err != nil {
		return "", wrap("pipeline incident of "+pipeline, err)
	}
	for _, v := range ids {
		id, _ := v.(string)
		if id == "" {
			continue
		}
		st, err := s.rdb.HGet(ctx, s.key("inc", id), "status").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return "", wrap("pipeline incident of "+pipeline, err)
		}
		if st == StatusOpen || st == StatusAcknowledged {
			return id, nil
		}
	}
	return "", nil
}
