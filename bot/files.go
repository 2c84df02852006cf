package bot

import (
	"context"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
)

// shareFile shares a reply's file (a postmortem draft) in its channel or thread, through
// Slack's external upload (files.getUploadURLExternal, the upload itself,
// files.completeUploadExternal; files.upload is retired), and returns the reply to show: a
// failure replaces it, since it announces a file nobody would find.
func (b *Bot) shareFile(ctx context.Context, r commands.Reply) commands.Reply {
	f := r.File
	if f == nil {
		return r
	}
	r.File = nil
	content := valid(f.Content)
	if content == "" {
		content = "(empty)"
	}
	_, err := b.opt.API.UploadFileContext(ctx, slack.UploadFileParameters{
		Content: content, FileSize: len(content), Filename: clip(plain(oneLine(f.Name)), 200),
		Title: clip(plain(oneLine(f.Title)), 250), Channel: f.Channel, ThreadTimestamp: f.ThreadTS,
		InitialComment: fileComment(*f),
	})
	if err != nil {
		b.opt.Metrics.SlackErrors.WithLabelValues("files.upload", slackCode(err)).Inc()
		b.log.Warn("share a file", "file", f.Name, "channel", f.Channel, "err", err)
		return commands.Reply{Text: "Sorry: " + clip(oneLine(f.Name), 100) + " could not be posted to Slack (" + slackCode(err) + "); try again."}
	}
	return r
}

// fileComment is the mrkdwn message that introduces a shared file.
func fileComment(f commands.File) string { return clip(mrkdwn(f.Comment), 1000) }
