package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
	"github.com/streamwatch/streamwatch/internal/testclock"
)

const (
	botToken = "xoxb-test"
	appToken = "xapp-test"
	channel  = "C0ALERTS"
)

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.BotToken, opts.AppToken = botToken, appToken
	opts.Logf = t.Logf
	s := New(opts)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func api(s *Server, opts ...slack.Option) *slack.Client {
	return slack.New(botToken, append([]slack.Option{slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken(appToken)}, opts...)...)
}

// client runs slack-go's socket-mode client against the fake until the test ends.
type client struct {
	*socketmode.Client
}

func connect(t *testing.T, s *Server) client {
	t.Helper()
	sm := socketmode.New(api(s))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sm.RunContext(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return client{sm}
}

// next returns the client's next event of type typ, skipping others.
func (c client) next(ctx context.Context, t *testing.T, typ socketmode.EventType) socketmode.Event {
	t.Helper()
	for {
		select {
		case e := <-c.Events:
			if e.Type == typ {
				return e
			}
			t.Logf("skipping %s event", e.Type)
		case <-ctx.Done():
			t.Fatalf("waiting for a %s event: %v", typ, ctx.Err())
		}
	}
}

// must(f())(t) is f's value, failing t when f failed.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantSlackError(t *testing.T, err error, code string) {
	t.Helper()
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != code {
		t.Fatalf("error = %v, want Slack error %q", err, code)
	}
}

var tsRE = regexp.MustCompile(`^\d{10}\.\d{6}$`)

func TestAuth(t *testing.T) {
	s := start(t, Options{BotUserID: "U0BOT", TeamID: "T0TEAM"})
	ctx := timeout(t)

	res := must(api(s).AuthTestContext(ctx))(t)
	if res.UserID != "U0BOT" || res.TeamID != "T0TEAM" || res.BotID == "" {
		t.Errorf("auth.test = %+v", res)
	}
	_, err := slack.New(appToken, slack.OptionAPIURL(s.APIURL())).AuthTestContext(ctx)
	wantSlackError(t, err, "not_allowed_token_type")
	_, err = slack.New("xoxb-wrong", slack.OptionAPIURL(s.APIURL())).AuthTestContext(ctx)
	wantSlackError(t, err, "invalid_auth")

	_, _, err = slack.New(botToken, slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken(botToken)).StartSocketModeContext(ctx)
	wantSlackError(t, err, "not_allowed_token_type")
	_, _, err = slack.New(botToken, slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken("xapp-wrong")).StartSocketModeContext(ctx)
	wantSlackError(t, err, "invalid_auth")
	_, u, err := api(s).StartSocketModeContext(ctx)
	if err != nil || !strings.HasPrefix(u, "ws://127.0.0.1:") || !strings.Contains(u, "/link/?ticket=") {
		t.Errorf("apps.connections.open = %q, %v", u, err)
	}

	calls := s.CallsTo("auth.test")
	if len(calls) != 3 || calls[0].Status != 200 || calls[1].Error != "not_allowed_token_type" || calls[2].Error != "invalid_auth" {
		t.Errorf("auth.test calls = %+v", calls)
	}
	if _, ok := calls[0].Params["token"]; ok {
		t.Error("the token was recorded")
	}
}

func TestMessagesAndThreads(t *testing.T) {
	s := start(t, Options{Channels: map[string]string{channel: "alerts"}})
	ctx := timeout(t)
	c := api(s)

	blocks := slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "*lag* on payments", false, false), nil, nil))
	ch, root, err := c.PostMessageContext(ctx, channel, slack.MsgOptionText("lag on payments", false), blocks)
	if err != nil || ch != channel || !tsRE.MatchString(root) {
		t.Fatalf("postMessage = %q, %q, %v", ch, root, err)
	}
	_, reply, err := c.PostMessageContext(ctx, channel, slack.MsgOptionText("still lagging", false), slack.MsgOptionTS(root))
	if err != nil || reply <= root {
		t.Fatalf("reply = %q, %v (root %s)", reply, err, root)
	}
	// A reply to a reply lands in the root's thread.
	_, reply2 := must2(t)(c.PostMessageContext(ctx, channel, slack.MsgOptionText("third", false), slack.MsgOptionTS(reply)))

	thread := s.Thread(channel, root)
	if len(thread) != 3 || thread[0].TS != root || thread[1].ThreadTS != root || thread[2].TS != reply2 || thread[2].ThreadTS != root {
		t.Fatalf("thread = %+v", thread)
	}
	if thread[0].User != "U0BOT" || thread[0].BotID == "" || !strings.Contains(string(thread[0].Blocks), "*lag* on payments") {
		t.Errorf("root = %+v", thread[0])
	}

	// chat.update keeps blocks it is not given, and counts edits.
	_, _, text, err := c.UpdateMessageContext(ctx, channel, root, slack.MsgOptionText("lag resolved", false))
	if err != nil || text != "lag resolved" {
		t.Fatalf("update = %q, %v", text, err)
	}
	m, _ := s.Message(channel, root)
	if m.Text != "lag resolved" || m.Edits != 1 || m.Blocks == nil {
		t.Errorf("updated message = %+v", m)
	}

	_, _, _, err = c.UpdateMessageContext(ctx, channel, "1.000000", slack.MsgOptionText("x", false))
	wantSlackError(t, err, "message_not_found")
	_, _, err = c.PostMessageContext(ctx, channel, slack.MsgOptionText("x", false), slack.MsgOptionTS("1.000000"))
	wantSlackError(t, err, "thread_not_found")
	_, _, err = c.PostMessageContext(ctx, "", slack.MsgOptionText("x", false))
	wantSlackError(t, err, "channel_not_found")
	_, _, err = c.PostMessageContext(ctx, "C0OTHER", slack.MsgOptionText("x", false))
	wantSlackError(t, err, "channel_not_found")
	_, _, err = c.PostMessageContext(ctx, channel)
	wantSlackError(t, err, "no_text")
	many := make([]slack.Block, 51)
	for i := range many {
		many[i] = slack.NewDividerBlock()
	}
	_, _, err = c.PostMessageContext(ctx, channel, slack.MsgOptionBlocks(many...))
	wantSlackError(t, err, "invalid_blocks")
	long := slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", strings.Repeat("x", 3001), false, false), nil, nil)
	_, _, err = c.PostMessageContext(ctx, channel, slack.MsgOptionBlocks(long))
	wantSlackError(t, err, "invalid_blocks")

	// Unparseable blocks, sent as a raw form.
	resp, err := http.PostForm(s.APIURL()+"chat.postMessage", url.Values{"token": {botToken}, "channel": {channel}, "blocks": {"[{"}})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if body.OK || body.Error != "invalid_blocks_format" {
		t.Errorf("bad blocks JSON answered %+v", body)
	}

	if got := len(s.Messages(channel)); got != 3 {
		t.Errorf("%d messages after refused posts, want 3", got)
	}
	posts := s.CallsTo("chat.postMessage")
	if posts[0].Params["channel"] != channel || posts[0].Params["text"] != "lag on payments" || !strings.HasPrefix(posts[0].Params["blocks"], `[{"type":"section"`) {
		t.Errorf("recorded params = %v", posts[0].Params)
	}
}

func must2(t *testing.T) func(string, string, error) (string, string) {
	return func(a, b string, err error) (string, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

func TestJSONBody(t *testing.T) {
	s := start(t, Options{})
	req, _ := http.NewRequest(http.MethodPost, s.APIURL()+"chat.postMessage",
		strings.NewReader(`{"channel":"C1","text":"hi","blocks":[{"type":"divider","block_id":"d1"}],"unfurl_links":false}`))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+botToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	msgs := s.Messages("C1")
	if len(msgs) != 1 || string(msgs[0].Blocks) != `[{"type":"divider","block_id":"d1"}]` {
		t.Fatalf("messages = %+v", msgs)
	}
	if p := s.Calls()[0].Params; p["unfurl_links"] != "false" || p["blocks"] != `[{"type":"divider","block_id":"d1"}]` {
		t.Errorf("params = %v", p)
	}
}

func TestMentionsEphemeralsUserGroups(t *testing.T) {
	s := start(t, Options{UserGroups: map[string][]string{"S0ONCALL": {"U1", "U2"}}})
	ctx := timeout(t)
	c := api(s)

	_, ts := must2(t)(c.PostMessageContext(ctx, channel, slack.MsgOptionText("paging <!here>", false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "owner <@U123|ana>", false, false), nil, nil))))
	_, plain := must2(t)(c.PostMessageContext(ctx, channel, slack.MsgOptionText("no one @ here, <#C1>", false)))
	m, _ := s.Message(channel, ts)
	if fmt.Sprint(m.Mentions) != "[<!here> <@U123|ana>]" {
		t.Errorf("mentions = %q", m.Mentions)
	}
	if m, _ := s.Message(channel, plain); len(m.Mentions) != 0 {
		t.Errorf("mentions of a plain message = %q", m.Mentions)
	}

	ets, err := c.PostEphemeralContext(ctx, channel, "U1", slack.MsgOptionText("only you <!channel>", false))
	if err != nil || !tsRE.MatchString(ets) {
		t.Fatalf("postEphemeral = %q, %v", ets, err)
	}
	eph := s.Ephemerals()
	if len(eph) != 1 || eph[0].User != "U1" || eph[0].TS != ets || eph[0].Source != "chat.postEphemeral" || fmt.Sprint(eph[0].Mentions) != "[<!channel>]" {
		t.Errorf("ephemerals = %+v", eph)
	}

	users := must(c.GetUserGroupMembersContext(ctx, "S0ONCALL"))(t)
	if fmt.Sprint(users) != "[U1 U2]" {
		t.Errorf("usergroup members = %v", users)
	}
	_, err = c.GetUserGroupMembersContext(ctx, "S0NONE")
	wantSlackError(t, err, "no_such_subteam")
}

func TestRateLimit(t *testing.T) {
	clk := testclock.New(time.Unix(1732970000, 0))
	s := start(t, Options{Clock: clk.Now, ChannelRateLimit: 1, ChannelBurst: 2})
	ctx := timeout(t)
	c := api(s)
	post := func(ch string) error {
		_, _, err := c.PostMessageContext(ctx, ch, slack.MsgOptionText("x", false))
		return err
	}

	for range 2 {
		if err := post(channel); err != nil {
			t.Fatal(err)
		}
	}
	var rl *slack.RateLimitedError
	if err := post(channel); !errors.As(err, &rl) || rl.RetryAfter != time.Second {
		t.Fatalf("third post: %v, want a RateLimitedError with RetryAfter 1s", err)
	}
	if err := post("C0OTHER"); err != nil {
		t.Fatalf("another channel is limited too: %v", err)
	}
	clk.Add(time.Second)
	if err := post(channel); err != nil {
		t.Fatalf("after Retry-After: %v", err)
	}

	s.FailNext("chat.postMessage", 1, Fault{Status: 429, RetryAfter: 7})
	if err := post("C0OTHER"); !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Fatalf("injected 429: %v", err)
	}
	if s.RateLimited() != 2 {
		t.Errorf("RateLimited() = %d, want 2", s.RateLimited())
	}
	if calls := s.CallsTo("chat.postMessage"); calls[2].Status != 429 || calls[2].Error != "ratelimited" {
		t.Errorf("the 429 was recorded as %+v", calls[2])
	}
}

// TestRetryAfterHonoured lets slack-go's own retry wait out a Retry-After (about a second).
func TestRetryAfterHonoured(t *testing.T) {
	s := start(t, Options{})
	ctx := timeout(t)
	c := api(s, slack.OptionRetryConfig(slack.RetryConfig{MaxRetries: 1}))
	s.FailNext("chat.postMessage", 1, Fault{Status: 429, RetryAfter: 1})

	began := time.Now()
	if _, _, err := c.PostMessageContext(ctx, channel, slack.MsgOptionText("x", false)); err != nil {
		t.Fatal(err)
	}
	calls := s.CallsTo("chat.postMessage")
	if len(calls) != 2 || calls[0].Status != 429 || calls[1].Status != 200 {
		t.Fatalf("calls = %+v", calls)
	}
	if waited := time.Since(began); waited < time.Second {
		t.Errorf("slack-go retried after %v, before Retry-After", waited)
	}
}

func TestFaults(t *testing.T) {
	s := start(t, Options{})
	ctx := timeout(t)
	c := api(s)

	s.FailNext("chat.postMessage", 1, Fault{Status: 500})
	s.FailNext("chat.postMessage", 1, Fault{Error: "invalid_auth"})
	_, _, err := c.PostMessageContext(ctx, channel, slack.MsgOptionText("x", false))
	var sce slack.StatusCodeError
	if !errors.As(err, &sce) || sce.Code != 500 {
		t.Errorf("500 fault: %v", err)
	}
	_, _, err = c.PostMessageContext(ctx, channel, slack.MsgOptionText("x", false))
	wantSlackError(t, err, "invalid_auth")
	if len(s.Messages(channel)) != 0 {
		t.Error("a failed call posted a message")
	}

	// A delay past the client's patience: the call took effect, the answer never arrived.
	s.FailNext("chat.postMessage", 1, Fault{Delay: time.Minute})
	slowCtx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	errc := make(chan error, 1)
	go func() {
		_, _, err := c.PostMessageContext(slowCtx, channel, slack.MsgOptionText("slow", false))
		errc <- err
	}()
	if err := s.WaitFor(ctx, func(s *Server) bool { return len(s.CallsTo("chat.postMessage")) == 3 }); err != nil {
		t.Fatal(err)
	}
	giveUp()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the delayed call returned %v", err)
	}
	if msgs := s.Messages(channel); len(msgs) != 1 || msgs[0].Text != "slow" {
		t.Errorf("messages = %+v", msgs)
	}
	if _, _, err = c.PostMessageContext(ctx, channel, slack.MsgOptionText("ok", false)); err != nil {
		t.Errorf("after the faults: %v", err)
	}
}

func TestSocketMode(t *testing.T) {
	s := start(t, Options{Channels: map[string]string{channel: "alerts"}})
	ctx := timeout(t)
	c := connect(t, s)

	hello := c.next(ctx, t, socketmode.EventTypeHello)
	if hello.Request.NumConnections != 1 || hello.Request.ConnectionInfo.AppID == "" {
		t.Errorf("hello = %+v", hello.Request)
	}

	t.Run("slash command", func(t *testing.T) {
		env := must(s.SendSlashCommand(ctx, SlashCommand{ChannelID: channel, UserID: "U1", Text: "lag payments"}))(t)
		e := c.next(ctx, t, socketmode.EventTypeSlashCommand)
		cmd := e.Data.(slack.SlashCommand)
		if cmd.Command != "/streamwatch" || cmd.Text != "lag payments" || cmd.ChannelID != channel || cmd.ChannelName != "alerts" ||
			cmd.UserID != "U1" || cmd.ResponseURL != env.ResponseURL || cmd.TriggerID == "" || cmd.APIAppID == "" || cmd.TeamID == "" {
			t.Errorf("slash command = %+v", cmd)
		}
		if e.Request.EnvelopeID != env.ID || !e.Request.AcceptsResponsePayload || e.Request.RetryAttempt != 0 {
			t.Errorf("request = %+v", e.Request)
		}
		if err := c.Ack(*e.Request, map[string]any{"response_type": "ephemeral", "text": "working on it"}); err != nil {
			t.Fatal(err)
		}
		ack := must(s.WaitAck(ctx, env.ID))(t)
		if !strings.Contains(string(ack.Payload), `"text":"working on it"`) || ack.Late || ack.Unknown {
			t.Errorf("ack = %+v", ack)
		}
		if eph := s.Ephemerals(); len(eph) != 1 || eph[0].Source != "ack" || eph[0].User != "U1" {
			t.Errorf("ephemerals = %+v", eph)
		}

		// The response_url: in_channel posts a message; the sixth use is refused.
		api := api(s)
		for i := range 6 {
			_, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(env.ResponseURL, slack.ResponseTypeInChannel),
				slack.MsgOptionText(fmt.Sprintf("answer %d", i), false))
			var sce slack.StatusCodeError
			if i < 5 && err != nil {
				t.Fatalf("use %d: %v", i+1, err)
			} else if i == 5 && (!errors.As(err, &sce) || sce.Code != 404) {
				t.Fatalf("sixth use: %v", err)
			}
		}
		posts := s.ResponsePosts()
		if len(posts) != 6 || posts[0].ResponseType != "in_channel" || posts[0].EnvelopeID != env.ID || posts[5].Error != "used_url" {
			t.Errorf("response posts = %+v", posts)
		}
		if msgs := s.Messages(channel); len(msgs) != 5 || msgs[0].Text != "answer 0" || msgs[0].BotID == "" {
			t.Errorf("messages = %+v", msgs)
		}

		// Redelivery: same envelope, next attempt.
		if err := s.Redeliver(ctx, env.ID); err != nil {
			t.Fatal(err)
		}
		e = c.next(ctx, t, socketmode.EventTypeSlashCommand)
		if e.Request.EnvelopeID != env.ID || e.Request.RetryAttempt != 1 || e.Request.RetryReason != "timeout" {
			t.Errorf("redelivered request = %+v", e.Request)
		}
		c.Ack(*e.Request)
		if err := s.WaitFor(ctx, func(s *Server) bool { return len(s.Acks()) == 2 }); err != nil {
			t.Fatal(err)
		}
		if a := s.Acks()[1]; a.Attempt != 1 || a.Payload != nil {
			t.Errorf("second ack = %+v", a)
		}
	})

	t.Run("app mention", func(t *testing.T) {
		_, root := must2(t)(api(s).PostMessageContext(ctx, channel, slack.MsgOptionText("incident: lag on payments", false)))
		env := must(s.SendAppMention(ctx, Mention{ChannelID: channel, UserID: "U2", Text: "lag payments", ThreadTS: root}))(t)
		e := c.next(ctx, t, socketmode.EventTypeEventsAPI)
		outer := e.Data.(slackevents.EventsAPIEvent)
		mention, ok := outer.InnerEvent.Data.(*slackevents.AppMentionEvent)
		if !ok {
			t.Fatalf("inner event = %T", outer.InnerEvent.Data)
		}
		if mention.ThreadTimeStamp != root || mention.Channel != channel || mention.User != "U2" ||
			mention.Text != "<@U0BOT> lag payments" || mention.TimeStamp != env.MessageTS {
			t.Errorf("app mention = %+v", mention)
		}
		if cb := outer.Data.(*slackevents.EventsAPICallbackEvent); cb.EventID != env.EventID || len(cb.Authorizations) != 1 {
			t.Errorf("callback = %+v", cb)
		}
		c.Ack(*e.Request)
		must(s.WaitAck(ctx, env.ID))(t)
		if th := s.Thread(channel, root); len(th) != 2 || th[1].User != "U2" {
			t.Errorf("thread = %+v", th)
		}
		if _, err := s.SendAppMention(ctx, Mention{ChannelID: channel, UserID: "U2", ThreadTS: "1.000000"}); err == nil {
			t.Error("a mention in a missing thread was sent")
		}
	})

	t.Run("block action", func(t *testing.T) {
		buttons := slack.NewActionBlock("", slack.NewButtonBlockElement("ack_incident", "inc-42", slack.NewTextBlockObject("plain_text", "Ack", false, false)))
		_, ts := must2(t)(api(s).PostMessageContext(ctx, channel, slack.MsgOptionText("incident 42", false), slack.MsgOptionBlocks(buttons)))
		env := must(s.SendBlockAction(ctx, BlockAction{UserID: "U3", ChannelID: channel, MessageTS: ts, ActionID: "ack_incident"}))(t)
		e := c.next(ctx, t, socketmode.EventTypeInteractive)
		cb := e.Data.(slack.InteractionCallback)
		if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) != 1 {
			t.Fatalf("callback = %+v", cb)
		}
		act := cb.ActionCallback.BlockActions[0]
		if act.ActionID != "ack_incident" || act.Value != "inc-42" || act.BlockID == "" || act.Text.Text != "Ack" {
			t.Errorf("action = %+v", act)
		}
		if cb.User.ID != "U3" || cb.Channel.ID != channel || cb.Container.MessageTs != ts || cb.Message.Timestamp != ts ||
			cb.Message.Text != "incident 42" || cb.ResponseURL != env.ResponseURL || cb.TriggerID == "" {
			t.Errorf("callback = %+v", cb)
		}
		c.Ack(*e.Request)
		must(s.WaitAck(ctx, env.ID))(t)

		// replace_original through the response_url edits the clicked message.
		_, _, err := api(s).PostMessageContext(ctx, "", slack.MsgOptionReplaceOriginal(env.ResponseURL), slack.MsgOptionText("acked by U3", false))
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := s.Message(channel, ts); m.Text != "acked by U3" || m.Edits != 1 || m.Blocks != nil {
			t.Errorf("message after replace_original = %+v", m)
		}
		if _, err := s.SendBlockAction(ctx, BlockAction{UserID: "U3", ChannelID: channel, MessageTS: ts, ActionID: "ack_incident"}); err == nil {
			t.Error("clicked a button the message no longer has")
		}
	})
}

func TestResponseURLExpires(t *testing.T) {
	clk := testclock.New(time.Unix(1732970000, 0))
	s := start(t, Options{Clock: clk.Now})
	ctx := timeout(t)
	c := connect(t, s)
	c.next(ctx, t, socketmode.EventTypeHello)
	env := must(s.SendSlashCommand(ctx, SlashCommand{ChannelID: channel, UserID: "U1", Text: "help"}))(t)
	clk.Add(31 * time.Minute)
	_, _, err := api(s).PostMessageContext(ctx, "", slack.MsgOptionResponseURL(env.ResponseURL, slack.ResponseTypeEphemeral), slack.MsgOptionText("late", false))
	var sce slack.StatusCodeError
	if !errors.As(err, &sce) || sce.Code != 404 {
		t.Fatalf("expired response_url: %v", err)
	}
	if p := s.ResponsePosts(); len(p) != 1 || p[0].Error != "expired_url" {
		t.Errorf("response posts = %+v", p)
	}
}

func TestAutoRedeliver(t *testing.T) {
	s := start(t, Options{RedeliverUnacked: true, AckTimeout: 100 * time.Millisecond})
	ctx := timeout(t)
	c := connect(t, s)
	c.next(ctx, t, socketmode.EventTypeHello)

	env := must(s.SendAppMention(ctx, Mention{ChannelID: channel, UserID: "U1", Text: "status"}))(t)
	first := c.next(ctx, t, socketmode.EventTypeEventsAPI) // not acked: Slack retries
	again := c.next(ctx, t, socketmode.EventTypeEventsAPI)
	if first.Request.EnvelopeID != env.ID || again.Request.EnvelopeID != env.ID || again.Request.RetryAttempt != 1 || again.Request.RetryReason != "timeout" {
		t.Fatalf("deliveries = %+v, %+v", first.Request, again.Request)
	}
	if string(first.Request.Payload) != string(again.Request.Payload) {
		t.Error("the retry's payload differs")
	}
	c.Ack(*again.Request)
	ack := must(s.WaitAck(ctx, env.ID))(t)
	if ack.Attempt != 1 || ack.Late {
		t.Errorf("ack = %+v", ack)
	}
}

func TestDropSocketsReconnects(t *testing.T) {
	s := start(t, Options{})
	ctx := timeout(t)
	c := connect(t, s)
	c.next(ctx, t, socketmode.EventTypeHello)

	if n := s.DropSockets(); n != 1 {
		t.Fatalf("dropped %d sockets", n)
	}
	c.next(ctx, t, socketmode.EventTypeHello) // slack-go reconnected
	if n := len(s.CallsTo("apps.connections.open")); n != 2 {
		t.Errorf("apps.connections.open called %d times", n)
	}
	env := must(s.SendSlashCommand(ctx, SlashCommand{ChannelID: channel, UserID: "U1", Text: "help"}))(t)
	e := c.next(ctx, t, socketmode.EventTypeSlashCommand)
	c.Ack(*e.Request)
	must(s.WaitAck(ctx, env.ID))(t)
}

func TestDisconnect(t *testing.T) {
	for _, reason := range []string{"warning", "refresh_requested", "link_disabled"} {
		t.Run(reason, func(t *testing.T) {
			s := start(t, Options{})
			ctx := timeout(t)
			c := connect(t, s)
			c.next(ctx, t, socketmode.EventTypeHello)
			if err := s.SendDisconnect(reason); err != nil {
				t.Fatal(err)
			}
			// slack-go reconnects on every disconnect reason, "warning" included, and never
			// shows the disconnect to its consumer.
			c.next(ctx, t, socketmode.EventTypeHello)
			err := s.WaitFor(ctx, func(s *Server) bool {
				return len(s.CallsTo("apps.connections.open")) == 2 && s.Connected() == 1
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNoConnection(t *testing.T) {
	s := start(t, Options{ConnectWait: 50 * time.Millisecond})
	if _, err := s.SendSlashCommand(timeout(t), SlashCommand{ChannelID: channel, UserID: "U1"}); err == nil {
		t.Error("delivered with no socket open")
	}
	if err := s.SendDisconnect("warning"); err == nil {
		t.Error("disconnect with no socket open succeeded")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := s.WaitFor(ctx, func(*Server) bool { return false }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitFor = %v", err)
	}
}

func TestTimestampsUniqueWithFrozenClock(t *testing.T) {
	s := start(t, Options{Clock: func() time.Time { return time.Unix(1732970000, 100_000) }})
	ctx := timeout(t)
	c := api(s)
	var prev string
	for i := range 3 {
		_, ts := must2(t)(c.PostMessageContext(ctx, channel, slack.MsgOptionText("x", false)))
		if i == 0 && ts != "1732970000.000100" {
			t.Errorf("first ts = %s", ts)
		}
		if ts <= prev {
			t.Errorf("ts %s after %s", ts, prev)
		}
		prev = ts
	}
}
