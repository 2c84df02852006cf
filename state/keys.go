package state

// Key layout. Every key starts with the hash tag "{<key_prefix>}", so every key the scripts
// touch lives in one Redis Cluster slot: the incident engine is one consistent unit, and a
// script never crosses slots. P below stands for "{<key_prefix>}".
//
//	P:seq:incident            string  INCR counter behind the human ids INC-1, INC-2, …
//	P:dedup:<sha1(key)>       string  dedup key → id of the open incident that absorbs it
//	P:last:<sha1(key)>        string  dedup key → the newest closed (resolved or merged) incident it opened
//	P:inc:<id>                hash    the incident (see incidentFields)
//	P:inc:<id>:alerts         hash    fingerprint → "<f|r>:<last seen ms>:<digest><severity>" (firing or
//	                                  resolved; earlier versions wrote JSON {"status","last_seen","d"});
//	                                  at most MaxListedAlerts (the hash's alerts_unlisted counts what did
//	                                  not fit, its firing how many fire)
//	P:inc:<id>:keys           set     dedup keys merged into this incident (its own is its "key" field)
//	P:inc:<id>:timeline       stream  events after "opened" (which the incident's hash holds):
//	                                  acknowledged, resolved, merged, alert_joined, alert_changed,
//	                                  alert_resolved, silenced, escalated, severity, assigned, notes,
//	                                  …; the newest MaxTimelineEvents (the hash's "events" counts all)
//	P:inc:<id>:context        hash    fingerprint → JSON {title, labels, annotations, links} of the
//	                                  alert as it last brought news; at most MaxListedAlerts
//	P:inc:<id>:news           list    news for the next coalesced update (JSON {k, d, fp…}, state.News), newest 10
//	P:inc:<id>:flood:keys     zset    a flood incident's dedup keys → occurrences; at most MaxListedFloodKeys
//	P:inc:<id>:flood:unlisted HLL     the keys beyond that list (to tell new ones from seen ones)
//	P:inc:<id>:flood:labels   zset    label "name=value" → distinct alerts with it (about the top 100)
//	P:inc:<id>:flood:sources  zset    alert title → distinct alerts with it (about the top 100)
//	P:inc:<id>:flood:severity zset    severity (1 … 5, 0 unknown) → the flood's distinct alerts of it
//	P:open                    zset    open incidents by first-seen time (ms)
//	P:commits:<pipeline>      zset    batch[/took ms] → when its checkpoint commit was seen written (ms): the newest 100, a day (the learned batch interval and usual batch duration)
//	P:heartbeats              hash    an expected alert's name (its matchers) → when it last arrived (ms)
//	P:heartbeats:since        hash    name → when streamwatch began to expect it (ms)
//	P:heartbeats:incident     hash    name → the open incident its absence opened
//	P:chan:<channel>          zset    the open incidents whose root is in the channel (their channel until it is
//	                                  posted), by first-seen time (ms × 1000 + number % 1000): incident list's index
//	P:status:<status>         zset    the open incidents of a status (open, acknowledged), scored as P:chan:…
//	P:sev:<n>                 zset    the open incidents of a severity (1 … 5, 0 unknown), scored as P:chan:…
//	P:chan-indexed            string  "2" once the incidents an older streamwatch opened are in the three
//	                                  indexes above ("1": in P:chan:… only)
//	P:ts:<channel>:<ts>       string  Slack message (root) → incident id
//	P:flood:<channel>         hash    the channel's flood: id (its incident), ended, hot_until, ends_at, since
//	P:flood:<channel>:win     list    arrival times (ms) of the channel's newest new keys, the limit + 1
//	P:floods                  zset    channels in a flood → when it ends unless the rate rises again (ms)
//	P:sweep                   string  the cursor of the pass giving old closed incidents their TTL ("done")
//	P:outbox                  stream  deliveries for Slack; consumer group "deliver"; delivered entries are deleted
//	P:due                     zset    incident id → time (ms) its coalesced thread update is due
//	P:autoresolve             zset    incident id → time (ms) it auto-resolves
//	P:diagnose                zset    incident id → when its automatic diagnosis is due or its claim ends (ms):
//	                                  the incidents opened for a pipeline, until diagnosed (diagnoses.go)
//	P:envelope:<id>           string  a handled socket-mode envelope (expires after a day)
//	P:lock:<name>             string  a lock with an expiry (scheduled jobs, singletons)
//	P:replicated              string  the write Confirm's WAIT follows (replicas.go): when it last ran (ms)
//	P:seq:silence             string  INCR counter behind silence ids SIL-1, SIL-2, …
//	P:silence:<id>            hash    a silence: kind (labels, incident), matchers or incident, by,
//	                                  reason, created, until, ended, hits; expires Store.Retention
//	                                  after its end
//	P:silence:<id>:alerts     hash    fingerprint → JSON {n, last, key, title} of the alerts a label
//	                                  silence silenced; at most 100
//	P:silences                zset    active silences → when they end (ms)
//	P:silences:version        string  INCR on every change of the label silences (see silences.go)
//	P:audit                   stream  who did what (commands, clicks, refusals), with the pipeline
//	                                  and incident each entry concerns
//	P:seq:plan                string  INCR counter behind repair and restore plan ids P-1, P-2, …
//	P:plan:<id>               string  a dry run's plan as shown (JSON), expiring after repair.confirm_within
//	P:job:<name>              hash    a scheduled job: last tick run, ticks missed
//	P:watches                 hash    pipeline → active recovery watch (JSON)
//	P:probe:<pipeline>        hash    newest probe status, since when, newest result
//	P:probe:<pipeline>:history list   newest probe results (JSON), bounded
//	P:lag:<n:cluster>:<n:group>:<topic> list  encoded lag sampling rounds, newest 60
//	P:detect:<pipeline>       hash    detection: round (ms), state, obs (the last observation),
//	                                  publish (publish_group's state), as package pipeline encodes them
//	P:pipe:<pipeline>         hash    the pipeline's open incidents for correlation: sw (opened by
//	                                  streamwatch), alert (opened by an alert); see detect.go
//	P:progress:<pipeline>     list    the pipeline's progress samples of the last hour, one per
//	                                  sampling round ("t,w,g,o,b,c"; see progress.go)
//	P:progress:<pipeline>:minutes list one point a minute before that hour, back to charts.window
//	P:progress:<pipeline>:probes list  probe results ("t,ok") of charts.window; the three keys
//	                                  expire charts.window after their last write
//
// A closed incident (resolved or merged) expires after Store.Retention with every P:inc:<id>…
// key, its P:ts:… lookup and its key's P:last:… link (see retention.go).
const (
	outboxGroup = "deliver"
)

func (s *Store) key(parts ...string) string {
	k := s.base
	for _, p := range parts {
		k += ":" + p
	}
	return k
}
