// Package demo plays the incident streamwatch was born from against the real bot: `streamwatch
// demo` runs serve() with a generated configuration and environment, wired to embedded
// stand-ins (Redis: miniredis; Kafka: kfake through internal/kafkatest; Slack: bot/slackfake;
// a Spark checkpoint and driver log in a temporary folder), breaks the pipeline the way it
// broke, and prints the incident channel as a transcript while streamwatch handles it. Without
// --script it then stays up: the webhooks listen and /streamwatch commands typed at a prompt go
// to the bot, until the context ends or stdin closes.
//
// Nothing leaves loopback. Every wait is on a condition with a deadline: a step whose expected
// outcome never shows up ends the demo with an error that names it.
package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// ServeFunc runs streamwatch (the serve command) with the configuration file at configPath and
// the environment getenv until ctx ends, serving the webhooks on ln and logging to logs.
type ServeFunc func(ctx context.Context, configPath string, ln net.Listener, getenv func(string) string, logs io.Writer) error

// Options configure a demo.
type Options struct {
	Serve  ServeFunc
	Stdout io.Writer
	Stderr io.Writer
	// Stdin carries the prompt's commands; nil or Script: no prompt.
	Stdin io.Reader
	// Script plays the incident and returns, without a prompt.
	Script bool
	// Listen is the webhook server's address; "" a loopback port the kernel picks.
	Listen string
	// Within bounds each wait for an expected outcome (30s).
	Within time.Duration
	// Out is the folder the charts posted to Slack are written to ("": the current one), so
	// that they can be opened.
	Out string
}

// people are the workspace's members as the transcript names them.
var people = roster{onCall: "alice", botUser: "streamwatch"}

// Run plays the demo. It returns nil when every step showed its expected outcome (and, without
// Script, the prompt ended), or an error naming the step that did not.
func Run(ctx context.Context, opt Options) (err error) {
	if opt.Within <= 0 {
		opt.Within = 30 * time.Second
	}
	if opt.Stderr == nil {
		opt.Stderr = io.Discard
	}
	began := time.Now()
	out := opt.Stdout
	fmt.Fprintln(out, "streamwatch demo: the incident streamwatch was born from, played against the real bot.")
	w, err := startWorld(opt.Listen)
	if err != nil {
		return fmt.Errorf("demo: start the stand-ins: %w", err)
	}
	defer w.close()
	fmt.Fprintf(out, "  · Redis: miniredis on %s · Kafka: kfake on %s · Slack: bot/slackfake on %s\n",
		w.redis.Addr(), w.kafka.ListenAddrs()[0], strings.TrimSuffix(w.slack.APIURL(), "/api/"))
	fmt.Fprintf(out, "  · files (checkpoint, driver log, backups, config): %s\n", w.dir)

	logPath := filepath.Join(w.dir, "streamwatch.log")
	logs, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer logs.Close()
	r, err := newReplies(w.kafka)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	serveCtx, stopServe := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan struct{})
	var serveErr error // set before served closes
	go func() {
		defer close(served)
		serveErr = opt.Serve(serveCtx, w.configPath, w.listener, func(k string) string { return w.env[k] }, logs)
	}()
	pipeCtx, stopPipe := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		stopServe()
		select {
		case <-served:
			if serveErr != nil && err == nil {
				err = fmt.Errorf("demo: streamwatch: %w", serveErr)
			}
		case <-time.After(20 * time.Second):
			if err == nil {
				err = errors.New("demo: streamwatch did not stop within 20s")
			}
		}
		stopPipe()
		r.stop()
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(opt.Stderr, "streamwatch's log (the last lines of %s):\n%s", logPath, tail(logPath, 25))
		}
	}()
	fmt.Fprintf(out, "  · streamwatch serve --config %s (logs: %s)\n", w.configPath, logPath)
	base := "http://" + w.listen
	if err := waitReady(ctx, base, served, func() error { return serveErr }, opt.Within); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(out, "  · ready: webhooks on %s, socket mode connected to the Slack fake\n", base)

	s := &session{opt: opt, w: w, r: r, base: base, pipeCtx: pipeCtx, echo: true,
		tr: newTranscript(out, w.slack, people, map[string]string{channelID: pipelineName, defaultChannel: "incidents"})}
	s.tr.out = opt.Out
	if s.tr.out == "" {
		s.tr.out = "."
	}
	if err := s.play(ctx); err != nil {
		if ctx.Err() != nil {
			return errors.New("demo: interrupted")
		}
		return err
	}
	s.tr.Step("Played in %s.", time.Since(began).Round(100*time.Millisecond))
	if opt.Script || opt.Stdin == nil {
		return nil
	}
	return s.prompt(ctx)
}

// waitReady polls /readyz (a condition) until it answers 200, streamwatch exits or within passes.
func waitReady(ctx context.Context, base string, served <-chan struct{}, serveErr func() error, within time.Duration) error {
	var last string
	exited := false
	ready := func() bool {
		select {
		case <-served:
			exited = true
			return true
		default:
		}
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			last = err.Error()
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(body))
		return resp.StatusCode == http.StatusOK
	}
	if err := wait.Until(ctx, within, "streamwatch becoming ready", ready); err != nil {
		return fmt.Errorf("%w (last /readyz: %s)", err, last)
	}
	if exited {
		return fmt.Errorf("streamwatch exited before it was ready: %v", serveErr())
	}
	return nil
}

// session is one demo run: the stand-ins, the pipeline, the transcript and what the bot offers.
type session struct {
	opt     Options
	w       *world
	r       *replies
	tr      *transcript
	base    string
	pipeCtx context.Context // the pipeline's processes run until the demo ends

	rootTS string // the incident's root message
	probed bool   // the write probe failed in step 2
	echo   bool   // print commands as typed (off at a terminal, which shows them)

	mu sync.Mutex // serializes commands typed at the prompt with the follower's flushes
}

// command sends a slash command as user in the pipeline's channel and waits for its reply.
func (s *session) command(ctx context.Context, user, text string, show bool) (slackfake.ResponsePost, error) {
	if show && s.echo {
		s.tr.Typed(user, "/streamwatch "+text)
	}
	env, err := s.w.slack.SendSlashCommand(ctx, slackfake.SlashCommand{ChannelID: channelID, UserID: user, Text: text})
	if err != nil {
		return slackfake.ResponsePost{}, fmt.Errorf("send /streamwatch %s: %w", text, err)
	}
	var got slackfake.ResponsePost
	err = s.waitSlack(ctx, "the reply to /streamwatch "+text, func(f *slackfake.Server) bool {
		for _, p := range f.ResponsePosts() {
			if p.EnvelopeID == env.ID {
				got = p
				return true
			}
		}
		return false
	})
	if show {
		s.tr.Flush()
	}
	return got, err
}

// mention posts "@streamwatch text" as user in the incident's thread (or the channel when
// there is no incident yet) and waits for the bot's answer there: its first later message in
// the thread that match accepts (nil: any).
func (s *session) mention(ctx context.Context, user, text string, match func(slackfake.Message) bool) (slackfake.Message, error) {
	env, err := s.w.slack.SendAppMention(ctx, slackfake.Mention{ChannelID: channelID, UserID: user,
		Text: "<@" + botUser + "> " + text, ThreadTS: s.rootTS})
	if err != nil {
		return slackfake.Message{}, fmt.Errorf("mention the bot: %w", err)
	}
	thread := s.rootTS
	if thread == "" {
		thread = env.MessageTS
	}
	var got slackfake.Message
	err = s.waitSlack(ctx, "the answer to @streamwatch "+text, func(f *slackfake.Server) bool {
		for _, m := range f.Thread(channelID, thread) {
			if m.BotID != "" && compareTS(m.TS, env.MessageTS) > 0 && (match == nil || match(m)) {
				got = m
				return true
			}
		}
		return false
	})
	s.tr.Flush()
	return got, err
}

// waitSlack waits until cond holds for the Slack fake, re-checking on every change of it.
func (s *session) waitSlack(ctx context.Context, what string, cond func(*slackfake.Server) bool) error {
	wctx, cancel := context.WithTimeout(ctx, s.opt.Within)
	defer cancel()
	if err := s.w.slack.WaitFor(wctx, cond); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s did not show up in Slack within %s", what, s.opt.Within)
	}
	return nil
}

// threadReply waits for a reply in the incident's thread that match accepts.
func (s *session) threadReply(ctx context.Context, what string, match func(slackfake.Message) bool) (slackfake.Message, error) {
	var got slackfake.Message
	err := s.waitSlack(ctx, what, func(f *slackfake.Server) bool {
		for _, m := range f.Thread(channelID, s.rootTS) {
			if m.TS != s.rootTS && match(m) {
				got = m
				return true
			}
		}
		return false
	})
	return got, err
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error() + "\n"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
}
