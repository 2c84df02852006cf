package demo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
)

const promptHelp = `Type at the prompt, as alice (on call, in slack.remediators), in #sms-replies:
  /streamwatch COMMAND     a slash command, e.g. /streamwatch incident list, /streamwatch diagnose sms-replies
  @streamwatch COMMAND     a mention in INC-1's thread, e.g. @streamwatch incident show
  click LABEL              click the newest button with that label, e.g. click Acknowledge
  help                     this text; Ctrl-D or Ctrl-C ends the demo
A line with none of these prefixes is sent as /streamwatch LINE.`

// prompt keeps the demo up: the webhook server listens, the pipeline runs, and every line of
// stdin is a command for the bot, until ctx ends or stdin closes. Whatever the bot posts on its
// own (alerts sent with curl, watch reports) is printed as it appears.
func (s *session) prompt(ctx context.Context) error {
	out := s.opt.Stdout
	fmt.Fprintf(out, "\nstreamwatch keeps running. Webhooks listen on %s; send an alert with:\n", s.base)
	fmt.Fprintf(out, "  curl -sS -X POST %s/webhooks/generic -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n"+
		"    -d '{\"title\":\"client replied sms\",\"severity\":\"Severity 3\",\"labels\":{\"alertname\":\"client replied sms\",\"service\":\"sms-replies\"}}'\n",
		s.base, s.w.token)
	fmt.Fprintln(out, promptHelp)
	// At a terminal the typed line is on screen already; piped input is echoed instead.
	terminal := isTerminal(s.opt.Stdin)
	s.echo = !terminal
	if q := s.r.query; q != nil {
		// The job keeps running at a calmer pace than the script's one batch a second.
		q.stop()
		s.r.query = startQuery(s.w.checkpoint, q.next, s.r.ends, 10*time.Second)
	}

	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		for followCtx.Err() == nil {
			if s.w.slack.WaitFor(followCtx, func(*slackfake.Server) bool { return s.tr.Pending() }) != nil {
				return
			}
			s.mu.Lock()
			s.tr.Flush()
			s.mu.Unlock()
		}
	}()
	defer func() { stopFollow(); <-followed }()

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(s.opt.Stdin)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		if terminal {
			fmt.Fprint(out, "> ")
		}
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(out)
			return nil
		case line, ok = <-lines:
		}
		if !ok {
			if terminal {
				fmt.Fprintln(out)
			}
			return nil
		}
		if err := s.typed(ctx, strings.TrimSpace(line)); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			fmt.Fprintf(out, "  (%v)\n", err)
		}
	}
}

// typed runs one line of the prompt.
func (s *session) typed(ctx context.Context, line string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case line == "":
		return nil
	case line == "help" || line == "?":
		fmt.Fprintln(s.opt.Stdout, promptHelp)
		return nil
	case strings.HasPrefix(line, "@streamwatch"):
		_, err := s.mention(ctx, onCall, strings.TrimSpace(strings.TrimPrefix(line, "@streamwatch")), nil)
		return err
	case strings.HasPrefix(line, "click "):
		return s.click(ctx, strings.TrimSpace(strings.TrimPrefix(line, "click ")))
	}
	text := strings.TrimSpace(strings.TrimPrefix(line, "/streamwatch"))
	_, err := s.command(ctx, onCall, text, true)
	return err
}

// isTerminal reports whether r is a terminal (a character device).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// click presses the newest button labelled label (any case) in the pipeline's channel.
func (s *session) click(ctx context.Context, label string) error {
	label = strings.Trim(label, "[]")
	msgs := s.w.slack.Messages(channelID)
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, b := range buttonsOf(msgs[i].Blocks) {
			if !strings.EqualFold(b.label, label) {
				continue
			}
			if s.echo {
				s.tr.Clicked(onCall, "["+b.label+"]")
			}
			before := len(s.w.slack.Calls())
			if _, err := s.w.slack.SendBlockAction(ctx, slackfake.BlockAction{UserID: onCall, ChannelID: channelID,
				MessageTS: msgs[i].TS, ActionID: b.actionID}); err != nil {
				return err
			}
			// The bot answers a click by changing a message or posting: wait for its next Web
			// API call, then print what changed.
			err := s.waitSlack(ctx, "the bot's answer to the click", func(f *slackfake.Server) bool {
				return len(f.Calls()) > before && s.tr.Pending()
			})
			if err == nil && (b.actionID == "incident_ack" || b.actionID == "incident_resolve") {
				// An incident button also updates the root message, after its thread reply.
				edits := msgs[i].Edits
				err = s.waitSlack(ctx, "the root message's update", func(f *slackfake.Server) bool {
					m, ok := f.Message(channelID, msgs[i].TS)
					return ok && m.Edits > edits
				})
			}
			s.tr.Flush()
			return err
		}
	}
	return fmt.Errorf("no button labelled %q in the channel", label)
}
