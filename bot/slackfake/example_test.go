package slackfake_test

import (
	"context"
	"fmt"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/streamwatch/streamwatch/bot/slackfake"
)

// A socket-mode client connects to the fake, receives a slash command and answers it in the
// channel through the response_url.
func Example() {
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-demo", AppToken: "xapp-demo"})
	if err := fake.Start(); err != nil {
		panic(err)
	}
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	api := slack.New("xoxb-demo", slack.OptionAPIURL(fake.APIURL()), slack.OptionAppLevelToken("xapp-demo"))
	sm := socketmode.New(api)
	go func() {
		for e := range sm.Events {
			if e.Type != socketmode.EventTypeSlashCommand {
				continue
			}
			cmd := e.Data.(slack.SlashCommand)
			_ = sm.Ack(*e.Request)
			_, _, _ = api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeInChannel),
				slack.MsgOptionText("lag on "+cmd.Text+": 0", false))
		}
	}()
	go func() { _ = sm.RunContext(ctx) }()

	env, err := fake.SendSlashCommand(ctx, slackfake.SlashCommand{ChannelID: "C1", UserID: "U1", Text: "payments"})
	if err != nil {
		panic(err)
	}
	if _, err := fake.WaitAck(ctx, env.ID); err != nil {
		panic(err)
	}
	_ = fake.WaitFor(ctx, func(s *slackfake.Server) bool { return len(s.Messages("C1")) == 1 })
	fmt.Println(fake.Messages("C1")[0].Text)
	// Output: lag on payments: 0
}
