package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// play runs the incident, step by step.
func (s *session) play(ctx context.Context) error {
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"the pipeline and its groups", s.stepPipeline},
		{"the checkpoint breaks", s.stepBreak},
		{"an alert opens an incident", s.stepAlert},
		{"the automatic diagnosis", s.stepDiagnosis},
		{"the fix", s.stepFix},
		{"backup and repair", s.stepRepair},
		{"the restart and its recovery", s.stepRestart},
	}
	for i, st := range steps {
		if err := st.run(ctx); err != nil {
			return fmt.Errorf("demo: step %d (%s): %w", i+1, st.name, err)
		}
	}
	return nil
}

// stepPipeline: replies arrive on the topic; the documented group is idle with old commits;
// the deployed job consumes with another group.
func (s *session) stepPipeline(ctx context.Context) error {
	s.tr.Step("1/7 The pipeline %s: client replies arrive on Kafka topic %s (%d partitions); a Spark job reads them", pipelineName, topic, partitions)
	now := time.Now()
	if err := sparktest.WriteCheckpoint(s.w.checkpoint, history(now)); err != nil {
		return fmt.Errorf("write the checkpoint: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := chownTree(s.w.checkpoint, sparkUID); err != nil {
			return err
		}
		s.tr.Note("the Spark job runs as uid %d (the Spark images' user), which owns the checkpoint folder; streamwatch knows it as job_user", sparkUID)
	}
	if err := appendFile(s.w.driverLog, ""); err != nil {
		return err
	}
	if err := s.w.kafka.CreateTopic(ctx, topic, partitions); err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	// What the job read before the v2 rollout, and what arrived since.
	done := int64(historyBatches * recordsPerBatch)
	if err := s.r.produce(ctx, int(done), now.Add(-50*time.Minute)); err != nil {
		return err
	}
	if err := s.w.kafka.Commit(ctx, documentedGroup, topic, map[int32]int64{0: done, 1: done, 2: done}); err != nil {
		return fmt.Errorf("commit %s: %w", documentedGroup, err)
	}
	if err := s.r.produce(ctx, 30, now.Add(-20*time.Minute)); err != nil {
		return err
	}
	s.tr.Note("documented consumer group (streamwatch's config): %s; it is idle, its commits stuck at %d on every partition", documentedGroup, done)
	if err := s.w.seedProgress(ctx, now); err != nil {
		return err
	}
	s.tr.Note("streamwatch's sampling rounds have kept the pipeline's progress since the query started 45 minutes ago (the demo writes those samples; its own rounds, every 30 s, add to them): what its charts draw")
	if err := s.w.writeJobConf(deployedGroup); err != nil {
		return err
	}
	if err := s.r.deploy(ctx, deployedGroup); err != nil {
		return err
	}
	if err := wait.Until(ctx, s.opt.Within, deployedGroup+" catching up with the topic", func() bool {
		n, ok := s.r.committed(ctx, deployedGroup)
		return ok && n >= s.r.produced()
	}); err != nil {
		return err
	}
	s.tr.Note("the deployed job actually consumes as %s (spark.kafka.group.id in %s): 1 live member, caught up", deployedGroup, filepath.Base(s.w.jobConf))
	s.r.keepProducing(s.pipeCtx, 500*time.Millisecond)
	s.tr.Note("replies keep arriving: one per partition every 0.5 s")
	return nil
}

// stepBreak: the location turns read-only (as a non-root user the write probe genuinely
// fails), the query dies writing batch 4, leaving offsets/4 empty, and the driver logs the
// permission failure.
func (s *session) stepBreak(ctx context.Context) error {
	s.tr.Step("2/7 The checkpoint breaks: the location turns read-only while the job writes batch %d", brokenBatch)
	if os.Geteuid() == 0 {
		if err := chownCheckpoint(s.w.checkpoint, 0); err != nil {
			return err
		}
	}
	if err := chmodCheckpoint(s.w.checkpoint, 0o555); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		s.tr.Note("a storage policy change gives the checkpoint folder, offsets/ and commits/ to root, mode 0555: uid %d may no longer write there", sparkUID)
		s.tr.Note("streamwatch runs as root here, so its own write test still passes; its read-only access check judges the job's user")
	} else {
		s.tr.Note("the checkpoint folder, offsets/ and commits/ are now read-only (chmod 0555)")
	}
	s.tr.Note("streamwatch's scheduled probe runs (the demo runs it now):")
	post, err := s.command(ctx, onCall, "probe "+pipelineName, true)
	if err != nil {
		return err
	}
	s.probed = strings.Contains(post.Text, "FAILED")
	if s.probed {
		// probe.open_incident is off in the demo: the failure is a notice in the channel.
		err = s.waitSlack(ctx, "the probe's failure notice", func(f *slackfake.Server) bool {
			return hasMessage(f, "Checkpoint probe of "+pipelineName+" FAILED")
		})
		s.tr.Flush()
		if err != nil {
			return err
		}
	} else {
		s.tr.Note("the probe passed although the folder is read-only for the job (does this user bypass file modes?); the driver log carries the evidence")
	}
	// The query was writing batch 4 when access went: the file stayed empty. (The demo itself
	// may still write there: it lends itself access for that one file.)
	spec := history(time.Now())
	offsets := filepath.Join(s.w.checkpoint, "offsets")
	broken := filepath.Join(offsets, fmt.Sprint(brokenBatch))
	at := spec.PlannedAt(brokenBatch)
	if err := withAccess(offsets, func() error {
		if err := os.WriteFile(broken, nil, 0o644); err != nil {
			return err
		}
		return os.Chtimes(broken, at, at)
	}); err != nil {
		return err
	}
	s.tr.Note("the query, writing batch %d, died: offsets/%d is left empty (0 bytes), which Spark cannot parse on restart", brokenBatch, brokenBatch)
	died := driverLogStart(s.w.checkpoint, spec.Start.Add(-time.Minute), at.Add(2*time.Second))
	if err := appendFile(s.w.driverLog, died); err != nil {
		return err
	}
	// The driver wrote its last line when it died, not now: a repair checks that the log is
	// quiet (repair.quiet_for).
	last := at.Add(3100 * time.Millisecond)
	if err := os.Chtimes(s.w.driverLog, last, last); err != nil {
		return err
	}
	s.tr.Note("the driver log (%s) ends with:", s.w.driverLog)
	for _, l := range strings.Split(died, "\n") {
		if strings.Contains(l, " ERROR ") || strings.Contains(l, "Exception: ") {
			s.tr.Note("    %s", clipLine(l, 160))
		}
	}
	return nil
}

// chownCheckpoint gives the checkpoint folder, offsets/ and commits/ to uid (and its group).
func chownCheckpoint(dir string, uid int) error {
	for _, d := range []string{"", "offsets", "commits"} {
		if err := os.Chown(filepath.Join(dir, d), uid, uid); err != nil {
			return err
		}
	}
	return nil
}

// chownTree gives every folder and file under dir to uid (and its group).
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, uid)
	})
}

// chmodCheckpoint sets the mode of the checkpoint folder, offsets/ and commits/.
func chmodCheckpoint(dir string, mode os.FileMode) error {
	for _, d := range []string{"", "offsets", "commits"} {
		if err := os.Chmod(filepath.Join(dir, d), mode); err != nil {
			return err
		}
	}
	return nil
}

// withAccess runs f with dir writable, then gives dir its mode back.
func withAccess(dir string, f func() error) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	ferr := f()
	if err := os.Chmod(dir, fi.Mode().Perm()); ferr == nil {
		ferr = err
	}
	return ferr
}

// stepAlert: Alertmanager's alert opens INC-1; a repeat is threaded into it.
func (s *session) stepAlert(ctx context.Context) error {
	s.tr.Step(`3/7 Alertmanager fires "client replied sms" (severity 3)`)
	if err := s.alert(ctx); err != nil {
		return err
	}
	err := s.waitSlack(ctx, "the incident's root message", func(f *slackfake.Server) bool {
		for _, m := range f.Messages(channelID) {
			if m.ThreadTS == "" && strings.Contains(m.Text, "INC-1: client replied sms") {
				s.rootTS = m.TS
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	s.tr.Flush()
	s.tr.Note("Alertmanager sends the alert again (repeat_interval): an identical re-send is no news, so only the root's count changes")
	if err := s.alert(ctx); err != nil {
		return err
	}
	if err := s.waitSlack(ctx, "the root to count the re-send", func(f *slackfake.Server) bool {
		m, _ := f.Message(channelID, s.rootTS)
		return strings.Contains(m.Text, "2 occurrences")
	}); err != nil {
		return err
	}
	s.tr.Flush()
	return nil
}

// alert posts the Alertmanager webhook with the bearer token and prints the answer.
func (s *session) alert(ctx context.Context) error {
	body := alertmanagerPayload(time.Now())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/webhooks/alertmanager", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.w.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("POST /webhooks/alertmanager: %w", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.tr.Note("POST /webhooks/alertmanager (Authorization: Bearer …) → %d %s", resp.StatusCode, strings.TrimSpace(string(answer)))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the webhook answered %d: %s", resp.StatusCode, answer)
	}
	return nil
}

// stepDiagnosis: the automatic diagnosis in the thread names the causes.
func (s *session) stepDiagnosis(ctx context.Context) error {
	s.tr.Step("4/7 streamwatch diagnoses %s on its own and posts the result in INC-1's thread", pipelineName)
	m, err := s.threadReply(ctx, "the automatic diagnosis in INC-1's thread", func(m slackfake.Message) bool {
		return strings.HasPrefix(m.Text, "Automatic diagnosis")
	})
	if err != nil {
		return err
	}
	s.tr.Flush()
	var missing []string
	for _, want := range []string{"CHECKPOINT_NOT_WRITABLE", "CONSUMER_GROUP_MISMATCH", deployedGroup, "CHECKPOINT_CORRUPT"} {
		if !strings.Contains(m.Text, want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the diagnosis does not name %s:\n%s", strings.Join(missing, ", "), m.Text)
	}
	s.tr.Note("named: the location is not writable (CHECKPOINT_NOT_WRITABLE), the job consumes as %s, not %s (CONSUMER_GROUP_MISMATCH), and offsets/%d is corrupt (CHECKPOINT_CORRUPT)",
		deployedGroup, documentedGroup, brokenBatch)
	// The chart follows the diagnosis: since when, and how bad.
	if _, err := s.threadReply(ctx, "the progress chart in INC-1's thread", func(m slackfake.Message) bool { return len(m.Files) > 0 }); err != nil {
		return err
	}
	s.tr.Flush()
	s.tr.Note("the chart shows the stall shaded from when the replies began to wait with no commit, the replies piling up since, and INC-1's opening")
	return nil
}

// stepFix: write access comes back; the job is redeployed with the documented group.
func (s *session) stepFix(ctx context.Context) error {
	s.tr.Step("5/7 The fix: write access comes back, and the job is redeployed with the documented group")
	if os.Geteuid() == 0 {
		if err := chownCheckpoint(s.w.checkpoint, sparkUID); err != nil {
			return err
		}
	}
	if err := chmodCheckpoint(s.w.checkpoint, 0o755); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		s.tr.Note("the checkpoint folder, offsets/ and commits/ belong to uid %d again, mode 0755", sparkUID)
	} else {
		s.tr.Note("the checkpoint folder, offsets/ and commits/ are writable again (chmod 0755)")
	}
	before, _ := s.r.committed(ctx, documentedGroup)
	if err := s.w.writeJobConf(documentedGroup); err != nil {
		return err
	}
	if err := s.r.deploy(ctx, documentedGroup); err != nil {
		return err
	}
	var after int64
	if err := wait.Until(ctx, s.opt.Within, documentedGroup+" committing again", func() bool {
		after, _ = s.r.committed(ctx, documentedGroup)
		return after > before
	}); err != nil {
		return err
	}
	s.tr.Note("redeployed with spark.kafka.group.id=%s: the %s member left; %s has 1 live member and commits again (%d → %d records in total)",
		documentedGroup, deployedGroup, documentedGroup, before, after)
	return nil
}

// stepRepair: back up the checkpoint, plan the repair, confirm it as a remediator; the corrupt
// file moves into the backup's quarantine folder.
func (s *session) stepRepair(ctx context.Context) error {
	s.tr.Step("6/7 Back up the checkpoint, then quarantine the corrupted fragment")
	broken := filepath.Join(s.w.checkpoint, "offsets", fmt.Sprint(brokenBatch))
	if _, err := s.command(ctx, onCall, "checkpoint backup "+pipelineName, true); err != nil {
		return err
	}
	var backup string
	if err := wait.Until(ctx, s.opt.Within, "a verified backup in "+s.w.backups, func() bool {
		backup = verifiedBackup(filepath.Join(s.w.backups, pipelineName))
		return backup != ""
	}); err != nil {
		return err
	}
	s.tr.Note("backup: %s (manifest.json and verified.json written)", backup)
	if _, err := s.command(ctx, onCall, "checkpoint repair "+pipelineName, true); err != nil {
		return err
	}
	// The dry run is the command's reply, seen only by the person who asked; its button runs
	// the confirmed repair as whoever clicks it.
	var plan slackfake.Ephemeral
	var confirm button
	if err := s.waitSlack(ctx, `the dry run's confirm button (action_id "repair_confirm")`, func(f *slackfake.Server) bool {
		for _, m := range f.Messages(channelID) {
			if b, ok := repairButton(m.Blocks); ok {
				plan, confirm = slackfake.Ephemeral{Channel: m.Channel, TS: m.TS, Text: m.Text, Blocks: m.Blocks}, b
				return true
			}
		}
		for _, e := range f.Ephemerals() {
			if b, ok := repairButton(e.Blocks); ok && e.Channel == channelID {
				plan, confirm = e, b
				return true
			}
		}
		return false
	}); err != nil {
		return err
	}
	if lines, _ := people.renderBlocks(plan.Blocks); !strings.Contains(plan.Text+strings.Join(lines, "\n"), fmt.Sprintf("offsets/%d", brokenBatch)) {
		return fmt.Errorf("the dry run does not list offsets/%d: %q", brokenBatch, plan.Text)
	}
	if _, err := os.Stat(broken); err != nil {
		return fmt.Errorf("the dry run moved offsets/%d: %w", brokenBatch, err)
	}
	s.tr.Clicked(onCall, "["+confirm.label+"]")
	if _, err := s.w.slack.SendBlockAction(ctx, slackfake.BlockAction{UserID: onCall, ChannelID: channelID, MessageTS: plan.TS,
		ActionID: confirm.actionID}); err != nil {
		return fmt.Errorf("click the confirm button: %w", err)
	}
	quarantined := filepath.Join(backup, "quarantine", "offsets", fmt.Sprint(brokenBatch))
	if err := wait.Until(ctx, s.opt.Within, fmt.Sprintf("offsets/%d moving to %s", brokenBatch, quarantined), func() bool {
		_, gone := os.Stat(broken)
		_, there := os.Stat(quarantined)
		return os.IsNotExist(gone) && there == nil
	}); err != nil {
		return err
	}
	s.settle(ctx)
	s.tr.Note("offsets/%d is out of the checkpoint, in %s", brokenBatch, quarantined)
	return nil
}

// stepRestart: a recovery watch in the thread; the job restarts and commits new batches while
// the documented group commits; the watch reports the recovery.
func (s *session) stepRestart(ctx context.Context) error {
	s.tr.Step("7/7 The Spark job restarts on the repaired checkpoint; streamwatch watches for progress")
	// The answer to the mention: the watch's start, or a refusal (a failure or a usage).
	m, err := s.mention(ctx, onCall, "watch "+pipelineName+" for 5m", func(m slackfake.Message) bool {
		lines, _ := people.renderBlocks(m.Blocks)
		answer := m.Text + "\n" + strings.Join(lines, "\n")
		return strings.Contains(answer, "Watching") || strings.HasPrefix(m.Text, "Sorry") || strings.Contains(answer, "Usage:")
	})
	if err != nil {
		return err
	}
	if !strings.Contains(m.Text, "Watching") {
		return fmt.Errorf("the watch was refused: %q", m.Text)
	}
	watchTS := m.TS
	if err := appendFile(s.w.driverLog, driverLogRestart(s.w.checkpoint, time.Now())); err != nil {
		return err
	}
	s.r.query = startQuery(s.w.checkpoint, brokenBatch, s.r.ends, time.Second)
	s.tr.Note("the query plans and commits a batch a second again (offsets/%d, commits/%d, …), and %s commits as it reads", brokenBatch, brokenBatch, documentedGroup)
	m, err = s.threadReply(ctx, "the watch's report in INC-1's thread", func(m slackfake.Message) bool {
		return compareTS(m.TS, watchTS) > 0 && (strings.Contains(m.Text, "Recovery") || strings.Contains(m.Text, "No progress on"))
	})
	if err != nil {
		return err
	}
	if !strings.Contains(m.Text, "Recovery") {
		s.tr.Flush()
		return fmt.Errorf("the watch saw no recovery: %q", m.Text)
	}
	// The recovery reply is followed by a chart, with the repair and the recovery marked.
	if _, err := s.threadReply(ctx, "the chart after the recovery", func(c slackfake.Message) bool {
		return len(c.Files) > 0 && compareTS(c.TS, m.TS) > 0
	}); err != nil {
		return err
	}
	s.tr.Flush()
	s.tr.Note("recovered: %s is progressing again", pipelineName)
	return s.afterRecovery(ctx)
}

// afterRecovery: the probe passes again, and diagnose says healthy: the driver log's
// permission error predates the newest checkpoint commit, so it is history, not a cause.
func (s *session) afterRecovery(ctx context.Context) error {
	if err := s.probeAgain(ctx); err != nil {
		return err
	}
	s.tr.Note("and diagnose agrees, with the old permission error shown as history:")
	post, err := s.command(ctx, onCall, "diagnose "+pipelineName, true)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(post.Text, pipelineName+": healthy") {
		return fmt.Errorf("diagnose after the recovery says %q, want healthy", post.Text)
	}
	return nil
}

// probeAgain: the write probe passes on the repaired, progressing checkpoint; when it failed
// before, the channel hears that it recovered.
func (s *session) probeAgain(ctx context.Context) error {
	s.tr.Note("and the write probe agrees:")
	post, err := s.command(ctx, onCall, "probe "+pipelineName, true)
	if err != nil {
		return err
	}
	if !strings.Contains(post.Text, pipelineName+" OK") {
		return fmt.Errorf("the probe after the recovery says %q, want OK", post.Text)
	}
	if !s.probed {
		return nil
	}
	err = s.waitSlack(ctx, "the probe's recovery notice", func(f *slackfake.Server) bool {
		return hasMessage(f, "Checkpoint probe of "+pipelineName+" recovered")
	})
	s.tr.Flush()
	return err
}

// settle prints what the bot posts after an action whose outcome was seen elsewhere (on
// disk): it waits for the next change in the channel, but not for long and without failing.
func (s *session) settle(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = s.w.slack.WaitFor(wctx, func(*slackfake.Server) bool { return s.tr.Pending() })
	s.tr.Flush()
}

// repairButton finds the repair's confirm button: action_id "repair_confirm", which the bot
// may prefix (command buttons are "cmd_repair_confirm").
func repairButton(raw json.RawMessage) (button, bool) {
	for _, b := range buttonsOf(raw) {
		if b.actionID == "repair_confirm" || strings.HasSuffix(b.actionID, "_repair_confirm") {
			return b, true
		}
	}
	return button{}, false
}

// verifiedBackup is the newest backup folder of dir holding a verified.json, or "".
func verifiedBackup(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for i := len(entries) - 1; i >= 0; i-- {
		p := filepath.Join(dir, entries[i].Name())
		if _, err := os.Stat(filepath.Join(p, "verified.json")); err == nil {
			return p
		}
	}
	return ""
}

func hasMessage(f *slackfake.Server, prefix string) bool {
	for _, m := range f.Messages(channelID) {
		if strings.HasPrefix(m.Text, prefix) {
			return true
		}
	}
	return false
}

// alertmanagerPayload is Alertmanager's webhook (version 4) for the alert that started it all.
func alertmanagerPayload(now time.Time) string {
	labels := map[string]string{"alertname": "client replied sms", "service": pipelineName, "severity": "Severity 3"}
	b, _ := json.Marshal(map[string]any{
		"version": "4", "receiver": "streamwatch", "status": "firing",
		"groupKey":    `{}:{alertname="client replied sms"}`,
		"groupLabels": map[string]string{"alertname": "client replied sms"}, "commonLabels": labels,
		"commonAnnotations": map[string]string{"summary": "client replied sms"},
		"externalURL":       "http://alertmanager:9093",
		"alerts": []map[string]any{{
			"status": "firing", "labels": labels, "fingerprint": "5a1f0c2d9e3b7a44",
			"annotations": map[string]string{"summary": "client replied sms",
				"description": "replies topic has new messages but no datastore writes",
				"runbook_url": "https://wiki.example/runbooks/sms-replies"},
			"generatorURL": "http://prometheus:9090/graph?g0.expr=sms_replies_written_total",
			"startsAt":     now.UTC().Add(-5 * time.Minute).Format(time.RFC3339Nano), "endsAt": "0001-01-01T00:00:00Z",
		}},
	})
	return string(b)
}

func clipLine(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
