package state

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Status values of an incident.
const (
	StatusOpen         = "open"
	StatusAcknowledged = "acknowledged"
	StatusResolved     = "resolved"
)

// AlertRecord is one normalized alert to record. State does not interpret labels; the caller
// has already routed the alert and computed its dedup key.
type AlertRecord struct {
	Key         string // dedup key
	Fingerprint string
	Resolved    bool
	Title       string
	Severity    int // 1 most severe … 5, 0 unknown
	Pipeline    string
	Channel     string
	Source      string // alertmanager, grafana, generic, probe
	Detail      string // one line shown in coalesced thread replies
	// Labels are the alert's labels; a flood ranks their values, label silences match them.
	Labels map[string]string
	// Annotations and Links (kind → URL, as the sender gave them) are kept for incident show
	// and the root; Title, Labels and Annotations tell a changed alert from a re-send.
	Annotations map[string]string
	Links       map[string]string
}

// Results of recording an alert.
const (
	ResultOpened    = "opened"    // opened the key's own incident
	ResultDuplicate = "duplicate" // joined the open incident of its key, or the flood that lists it
	ResultFlooded   = "flooded"   // a key new to its channel's flood (or beyond its list) joined it
	ResultResolved  = "resolved"  // marked its alert resolved in the incident of its key
	ResultIgnored   = "ignored"   // a resolved alert of no open incident
	ResultSilenced  = "silenced"  // a label silence matched it: no incident (Outcome.Silence)
	ResultHeartbeat = "heartbeat" // an expected alert (alerts.heartbeats): its arrival noted, no incident
	// ResultCorrelated: a new key of a pipeline joined the pipeline's open incident
	// (alerts.correlate_pipeline, detect.go).
	ResultCorrelated = "correlated"
)

// Outcome says what recording an alert did.
type Outcome struct {
	Incident string // "" when a resolved alert matched no open incident
	Result   string // one of the Result… values
	// Previous is, for opened, the previous incident of the same key, and for the alert that
	// opened a flood incident, the channel's previous flood incident; if any.
	Previous string
	// FloodOpened is true for the alert whose arrival started a flood (and opened its incident).
	FloodOpened bool
	// Silence is the label silence that silenced the alert (ResultSilenced).
	Silence string
}

// Incident is an incident as stored.
type Incident struct {
	ID          string
	Key         string
	Title       string
	Severity    int
	Pipeline    string
	Channel     string
	Status      string
	Source      string
	FirstSeen   time.Time
	LastSeen    time.Time
	Count       int64
	RootTS      string
	RootChannel string // where the root was posted ("" until it is)
	Delivered   int64  // the sequence number of the last delivery Slack took
	Previous    string
	MergedInto  string
	MergedFrom  []string
	AckBy       string
	ResolvedBy  string
	ResolvedAt  time.Time
	Note        string
	AllResolved bool
	// Quiet incidents (those a failing probe opened) report repeats by editing the root
	// message only; their thread hears only of changes.
	Quiet  bool
	Alerts map[string]AlertState
	// Listed is how many alerts the incident lists, Firing how many of them fire (kept as they
	// change: nobody scans the list for it). Head reads both without the list.
	Listed, Firing int64
	// UnlistedAlerts counts occurrences of alerts the full Alerts list could not take
	// (MaxListedAlerts); Count has them.
	UnlistedAlerts int64
	// Flood is set for a flood incident: the alerts of many keys that joined it.
	Flood *FloodDetail
	// Detect is the symptom streamwatch's detection found for the incident's pipeline, with
	// its numbers, as the root shows it; DetectState is "active" or "recovered" ("" without).
	Detect      string
	DetectState string
	AckAt       time.Time
	// SeverityBy is who set the severity by hand (alerts no longer change it then).
	SeverityBy string
	// Owner is the user id of the person the incident is assigned to (OwnerName as the
	// assigning command named them), OwnerBy who assigned it.
	Owner, OwnerName, OwnerBy string
	// EscalatedAt is when the incident was escalated (slack.escalation), EscalatedTo whom
	// (user and user-group ids); zero when it was not.
	EscalatedAt time.Time
	EscalatedTo []string
	// Silence is the silence in force on the incident; nil when none is.
	Silence *IncidentSilence
	// Events counts the timeline's events after "opened", those it dropped included.
	Events int64
	// FaultAt is when the fault streamwatch opened the incident for became visible (records
	// began to wait, the query's last heartbeat, an expected alert's last arrival); zero for
	// an alert's incident.
	FaultAt time.Time
	// Links are the links of the alert that opened the incident (or the first alert that
	// brought any), by kind: generator, dashboard, panel, silence, runbook; as sent.
	Links map[string]string
}

// ListedIn is the channel whose incident list holds the incident: where its root is, its
// channel until the root is posted (a root moved to slack.default_channel moves it).
func (inc *Incident) ListedIn() string {
	if inc.RootChannel != "" {
		return inc.RootChannel
	}
	return inc.Channel
}

// IncidentSilence is the silence of an incident.
type IncidentSilence struct {
	ID     string
	Until  time.Time
	By     string
	Reason string
}

// AlertState is the last known state of one alert (by fingerprint) in an incident.
type AlertState struct {
	Status   string
	LastSeen time.Time
}

// RecordAlert records a into the incident of its dedup key, opening one if none is open. It is
// atomic across goroutines and processes. Errors wrap ErrUnavailable when Redis is unreachable.
func (s *Store) RecordAlert(ctx context.Context, a AlertRecord) (Outcome, error) {
	out, err := s.RecordAlerts(ctx, []AlertRecord{a})
	if err != nil {
		return Outcome{}, err
	}
	return out[0], nil
}

// keyHash names a dedup key in Redis key names, as the scripts' dedup() does.
func keyHash(key string) string {
	h := sha1.Sum([]byte(key))
	return hex.EncodeToString(h[:])
}

// Get returns the incident with the given id (case-insensitive "inc-7" and "7" work too), with
// the state of every alert it lists.
func (s *Store) Get(ctx context.Context, id string) (*Incident, error) {
	return s.get(ctx, id, true)
}

// Head returns the incident without its alert list (how many it lists and how many fire are
// counted all the same): what a delivery of its messages needs.
func (s *Store) Head(ctx context.Context, id string) (*Incident, error) {
	return s.get(ctx, id, false)
}

func (s *Store) get(ctx context.Context, id string, alerts bool) (*Incident, error) {
	id = NormalizeID(id)
	pipe := s.rdb.Pipeline()
	h := pipe.HGetAll(ctx, s.key("inc", id))
	var al *redis.MapStringStringCmd
	var n *redis.IntCmd
	if alerts {
		al = pipe.HGetAll(ctx, s.key("inc", id, "alerts"))
	} else {
		n = pipe.HLen(ctx, s.key("inc", id, "alerts"))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, wrap("get incident "+id, err)
	}
	if len(h.Val()) == 0 {
		return nil, fmt.Errorf("incident %s: %w", id, ErrNotFound)
	}
	var list map[string]string
	if al != nil {
		list = al.Val()
	}
	inc := parseIncident(h.Val(), list)
	if n != nil {
		inc.Listed = n.Val()
		if _, counted := h.Val()["firing"]; !counted && inc.Listed > 0 {
			// Recorded by an earlier version, without the count: read the list once.
			full, err := s.get(ctx, id, true)
			if err != nil {
				return nil, err
			}
			inc.Firing = full.Firing
		}
	}
	if h.Val()["flood"] == "1" {
		f, err := s.floodDetail(ctx, id, h.Val())
		if err != nil {
			return nil, err
		}
		inc.Flood = f
	}
	return inc, nil
}

// NormalizeID turns "7", "inc-7" and "INC-7" into "INC-7".
func NormalizeID(id string) string {
	id = strings.TrimSpace(id)
	if _, err := strconv.Atoi(id); err == nil {
		return "INC-" + id
	}
	if len(id) > 4 && strings.EqualFold(id[:4], "inc-") {
		return "INC-" + id[4:]
	}
	return id
}

func parseIncident(h map[string]string, alerts map[string]string) *Incident {
	n := func(k string) int64 { v, _ := strconv.ParseInt(h[k], 10, 64); return v }
	inc := &Incident{
		ID: h["id"], Key: h["key"], Title: h["title"], Severity: int(n("severity")),
		Pipeline: h["pipeline"], Channel: h["channel"], Status: h["status"], Source: h["source"],
		FirstSeen: fromMS(n("first_seen")), LastSeen: fromMS(n("last_seen")), Count: n("count"),
		RootTS: h["root_ts"], RootChannel: h["root_channel"], Delivered: n("delivered"), Previous: h["previous"], MergedInto: h["merged_into"],
		AckBy: h["ack_by"], ResolvedBy: h["resolved_by"], ResolvedAt: fromMS(n("resolved_at")),
		Note: h["note"], AllResolved: h["all_resolved"] == "1", Quiet: h["quiet"] == "1",
		UnlistedAlerts: n("alerts_unlisted"),
		Alerts:         make(map[string]AlertState, len(alerts)),
		Detect:         h["detect"], DetectState: h["detect_state"],
	}
	if mf := h["merged_from"]; mf != "" {
		inc.MergedFrom = strings.Split(mf, ",")
	}
	inc.AckAt, inc.SeverityBy, inc.Events = fromMS(n("ack_at")), h["severity_by"], n("events")
	inc.Owner, inc.OwnerName, inc.OwnerBy = h["owner"], h["owner_name"], h["owner_by"]
	if v, err := strconv.ParseInt(h["fault_at"], 10, 64); err == nil {
		inc.FaultAt = fromMS(v)
	}
	inc.EscalatedAt = fromMS(n("escalated_at"))
	if to := h["escalated_to"]; to != "" {
		inc.EscalatedTo = strings.Split(to, ",")
	}
	if sid := h["silence_id"]; sid != "" {
		inc.Silence = &IncidentSilence{ID: sid, Until: fromMS(n("silenced_until")), By: h["silenced_by"], Reason: h["silence_reason"]}
	}
	if l := h["links"]; l != "" {
		_ = json.Unmarshal([]byte(l), &inc.Links)
	}
	inc.Firing = n("firing")
	_, counted := h["firing"]
	for fp, v := range alerts {
		st := parseAlertState(v)
		inc.Alerts[fp] = st
		if !counted && st.Status != "resolved" {
			inc.Firing++
		}
	}
	if alerts != nil {
		inc.Listed = int64(len(alerts))
	}
	return inc
}

// parseAlertState reads an alert's state as the scripts write it, "<f|r>:<last seen ms>:<digest>"
// (dedup.lua), or as earlier versions did, a small JSON ({"status":"firing","last_seen":123}).
func parseAlertState(v string) AlertState {
	var st AlertState
	if !strings.HasPrefix(v, "{") {
		st.Status = "firing"
		if strings.HasPrefix(v, "r") {
			st.Status = "resolved"
		}
		if seen, _, ok := strings.Cut(v[min(len(v), 2):], ":"); ok {
			n, _ := strconv.ParseInt(seen, 10, 64)
			st.LastSeen = fromMS(n)
		}
		return st
	}
	if strings.Contains(v, `"resolved"`) {
		st.Status = "resolved"
	} else {
		st.Status = "firing"
	}
	if i := strings.Index(v, `"last_seen":`); i >= 0 {
		rest := v[i+len(`"last_seen":`):]
		j := strings.IndexAny(rest, ",}")
		if j > 0 {
			f, _ := strconv.ParseFloat(rest[:j], 64)
			st.LastSeen = fromMS(int64(f))
		}
	}
	return st
}

// ListOpen returns the open and acknowledged incidents, oldest first; with channel set, only
// those of that channel.
func (s *Store) ListOpen(ctx context.Context, channel string) ([]*Incident, error) {
	ids, err := s.rdb.ZRange(ctx, s.key("open"), 0, -1).Result()
	if err != nil {
		return nil, wrap("list incidents", err)
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.key("inc", id))
	}
	if len(ids) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, wrap("list incidents", err)
		}
	}
	var out []*Incident
	for _, c := range cmds {
		if len(c.Val()) == 0 {
			continue
		}
		inc := parseIncident(c.Val(), nil)
		if channel == "" || inc.ListedIn() == channel {
			out = append(out, inc)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FirstSeen.Before(out[j].FirstSeen) })
	return out, nil
}

// ByThread returns the id of the incident whose root message is ts in channel, or "".
func (s *Store) ByThread(ctx context.Context, channel, ts string) (string, error) {
	id, err := s.rdb.Get(ctx, s.key("ts", channel, ts)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", wrap("find incident by thread", err)
	}
	return id, nil
}

// Timeline returns the newest n events of an incident, oldest first. The first event,
// "opened", is not stored in the timeline stream but read from the incident itself.
func (s *Store) Timeline(ctx context.Context, id string, n int64) ([]Event, error) {
	id = NormalizeID(id)
	pipe := s.rdb.Pipeline()
	xs := pipe.XRevRangeN(ctx, s.key("inc", id, "timeline"), "+", "-", n)
	opened := pipe.HMGet(ctx, s.key("inc", id), "first_seen", "source", "title")
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("read timeline", err)
	}
	msgs := xs.Val()
	out := make([]Event, 0, len(msgs)+1)
	// (An incident opened by an older streamwatch has "opened" in its stream already.)
	storedOpen := len(msgs) > 0 && str(msgs[len(msgs)-1].Values["event"]) == "opened"
	if v := opened.Val(); int64(len(msgs)) < n && !storedOpen && len(v) == 3 && v[0] != nil {
		first, _ := strconv.ParseInt(str(v[0]), 10, 64)
		out = append(out, Event{At: fromMS(first), Name: EventOpened, Actor: str(v[1]), Title: str(v[2])})
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		out = append(out, parseEvent(msgs[i].Values))
	}
	return out, nil
}

// ChangeError explains why an acknowledge, resolve or merge did not apply.
type ChangeError struct {
	Incident string
	Reason   string // notfound, resolved, acknowledged, same
}

func (e *ChangeError) Error() string {
	switch e.Reason {
	case "notfound":
		return fmt.Sprintf("incident %s does not exist", e.Incident)
	case "same":
		return "cannot merge an incident into itself"
	case "merged":
		return fmt.Sprintf("incident %s was merged: unmerge it instead", e.Incident)
	case "not_merged":
		return fmt.Sprintf("incident %s was not merged into another", e.Incident)
	default:
		return fmt.Sprintf("incident %s is already %s", e.Incident, e.Reason)
	}
}

// Acknowledge marks an open incident acknowledged by actor.
func (s *Store) Acknowledge(ctx context.Context, id, actor string) error {
	id = NormalizeID(id)
	res, err := s.one(s.run(ctx, ackScript, []string{s.base}, id, actor, ms(s.now())).Result())
	if err != nil {
		return wrap("acknowledge "+id, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return &ChangeError{Incident: id, Reason: r}
	}
	return nil
}

// SetFaultAt records when the fault behind incident id became visible (the first time only).
func (s *Store) SetFaultAt(ctx context.Context, id string, at time.Time) error {
	return wrap("record fault time of "+id, s.rdb.HSetNX(ctx, s.key("inc", NormalizeID(id)), "fault_at", ms(at)).Err())
}

// Unacknowledge takes an acknowledgement back: the incident is open again and its escalation
// resumes at the next level.
func (s *Store) Unacknowledge(ctx context.Context, id, actor string) error {
	return s.change(ctx, unackScript, "unacknowledge", NormalizeID(id), actor)
}

// Reopen opens a resolved incident again (within its retention); its thread continues, and it
// takes back those of its keys no other incident took meanwhile.
func (s *Store) Reopen(ctx context.Context, id, actor string) error {
	return s.change(ctx, reopenScript, "reopen", NormalizeID(id), actor)
}

// Unmerge undoes the merge of from into another open incident: from opens again with its
// keys, alerts and count.
func (s *Store) Unmerge(ctx context.Context, from, actor string) error {
	return s.change(ctx, unmergeScript, "unmerge", NormalizeID(from), actor)
}

// change runs a script of a person's change to incident id (ARGV id, actor, now).
func (s *Store) change(ctx context.Context, sc *luaScript, what, id, actor string) error {
	res, err := s.one(s.run(ctx, sc, []string{s.base}, id, actor, ms(s.now())).Result())
	if err != nil {
		return wrap(what+" "+id, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return &ChangeError{Incident: or(res.str(0, "incident"), id), Reason: r}
	}
	return nil
}

// Resolve resolves an incident; later alerts with its keys open a new incident linked to it.
func (s *Store) Resolve(ctx context.Context, id, actor, note string) error {
	id = NormalizeID(id)
	res, err := s.one(s.run(ctx, resolveScript, []string{s.base}, id, actor, note, ms(s.now()), "", s.retentionMS()).Result())
	if err != nil {
		return wrap("resolve "+id, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return &ChangeError{Incident: id, Reason: r}
	}
	return nil
}

// Merge moves from's alerts and dedup keys into into (so from's future duplicates thread into
// into) and resolves from as merged.
func (s *Store) Merge(ctx context.Context, from, into, actor string) error {
	from, into = NormalizeID(from), NormalizeID(into)
	res, err := s.one(s.run(ctx, mergeScript, []string{s.base}, from, into, actor, ms(s.now()), s.retentionMS()).Result())
	if err != nil {
		return wrap("merge "+from+" into "+into, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return &ChangeError{Incident: or(res.str(0, "incident"), from), Reason: r}
	}
	return nil
}

// Note posts detail into an incident's thread as event ev (diagnosis, watch, remediation),
// after the incident's earlier messages. With once set, only the first note with that once
// value is posted for the incident; Note then reports false.
func (s *Store) Note(ctx context.Context, id, ev, actor, detail, once string) (bool, error) {
	return s.NoteWithSummary(ctx, id, ev, actor, "", detail, once)
}

// NoteWithSummary is Note for a detail that is data (a reply the bot renders): the incident's
// timeline keeps summary instead of the detail's first 200 bytes.
func (s *Store) NoteWithSummary(ctx context.Context, id, ev, actor, summary, detail, once string) (bool, error) {
	id = NormalizeID(id)
	res, err := s.one(s.run(ctx, noteScript, []string{s.base}, id, ev, actor, detail, ms(s.now()), once, summary).Result())
	if err != nil {
		return false, wrap("note on "+id, err)
	}
	switch r := res.str(0, "result"); r {
	case "ok":
		return true, nil
	case "skipped":
		return false, nil
	default:
		return false, &ChangeError{Incident: id, Reason: r}
	}
}

// MarkQuiet makes an incident quiet: its duplicates edit the root message but post nothing
// in its thread.
func (s *Store) MarkQuiet(ctx context.Context, id string) error {
	return wrap("mark "+id+" quiet", s.rdb.HSet(ctx, s.key("inc", NormalizeID(id)), "quiet", "1").Err())
}

// AutoResolveDue resolves the incidents whose auto-resolve time has come; each exactly once
// across replicas. It returns the ids it resolved.
func (s *Store) AutoResolveDue(ctx context.Context) ([]string, error) {
	now := ms(s.now())
	ids, err := s.rdb.ZRangeByScore(ctx, s.key("autoresolve"), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now, 10), Count: 100}).Result()
	if err != nil {
		return nil, wrap("auto-resolve", err)
	}
	var done []string
	for _, id := range ids {
		res, err := s.one(s.run(ctx, resolveScript, []string{s.base}, id, "streamwatch", "", now, "auto", s.retentionMS()).Result())
		if err != nil {
			return done, wrap("auto-resolve "+id, err)
		}
		if res.str(0, "result") == "ok" {
			done = append(done, id)
		}
	}
	return done, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
