package bot

import (
	"bytes"
	"context"
	"fmt"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/charts"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// shareFile shares a reply's files in its channel or thread: its chart (drawn here) and then
// its document (a postmortem draft, which may refer to the chart), through Slack's external
// upload (files.getUploadURLExternal, the upload itself, files.completeUploadExternal;
// files.upload is retired), and returns the reply to show: a failure replaces it, since it
// announces a file nobody would find.
func (b *Bot) shareFile(ctx context.Context, r commands.Reply) commands.Reply {
	if c := r.Chart; c != nil {
		r.Chart = nil
		up, err := chartUpload(*c)
		if err == nil {
			comment := c.Comment
			if comment == "" {
				comment = r.Text
			}
			err = b.upload(ctx, c.Channel, c.ThreadTS, clip(mrkdwn(comment), 1000), up)
		}
		if err != nil {
			return commands.NotShared(clip(oneLine(c.Name), 100), slackCode(err))
		}
	}
	f := r.File
	if f == nil {
		return r
	}
	r.File = nil
	content := valid(f.Content)
	if content == "" {
		content = commands.EmptyFile
	}
	err := b.upload(ctx, f.Channel, f.ThreadTS, fileComment(*f), &Upload{Name: f.Name, Title: f.Title, Data: []byte(content)})
	if err != nil {
		return commands.NotShared(clip(oneLine(f.Name), 100), slackCode(err))
	}
	return r
}

// upload shares one file, counting and logging a failure.
func (b *Bot) upload(ctx context.Context, channel, thread, comment string, up *Upload) error {
	err := slackMessages{b.opt.API}.upload(ctx, channel, Message{Text: comment, ThreadTS: thread, File: up})
	if err != nil {
		b.opt.Metrics.SlackErrors.WithLabelValues("files.upload", slackCode(err)).Inc()
		b.log.Warn("share a file", "file", up.Name, "channel", channel, "err", err)
	}
	return err
}

// fileComment is the mrkdwn message that introduces a shared file.
func fileComment(f commands.File) string { return clip(mrkdwn(f.Comment), 1000) }

// Upload is a file a message shares: the message's text introduces it.
type Upload struct {
	Name, Title string
	// AltText describes an image for screen readers (Slack's alt_txt).
	AltText string
	Data    []byte
}

// upload shares m.File in channel (in the thread of m.ThreadTS when set), introduced by m.Text.
func (s slackMessages) upload(ctx context.Context, channel string, m Message) error {
	f := m.File
	_, err := s.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader: bytes.NewReader(f.Data), FileSize: len(f.Data), Filename: clip(plain(oneLine(f.Name)), 200),
		Title: clip(plain(oneLine(f.Title)), 250), AltTxt: clip(plain(oneLine(f.AltText)), 1000),
		Channel: channel, ThreadTimestamp: m.ThreadTS, InitialComment: m.Text,
	})
	return err
}

// chartUpload draws a reply's chart as the PNG to upload, with its alt text.
func chartUpload(c commands.Chart) (*Upload, error) {
	img, err := charts.Render(c.Data)
	if err != nil {
		return nil, fmt.Errorf("draw %s: %w", c.Name, err)
	}
	return &Upload{Name: c.Name, Title: c.Title, AltText: c.Alt, Data: img.PNG}, nil
}

// threadFile is the file an outbox entry shares in its thread: a chart note's chart, drawn
// now; nil for every other entry, or when the chart cannot be drawn (its text still goes).
func threadFile(e state.Delivery) *Upload {
	if e.Kind != state.KindEvent || e.Name != "chart" {
		return nil
	}
	r, ok := commands.DecodeReply(e.Detail)
	if !ok || r.Chart == nil {
		return nil
	}
	up, err := chartUpload(*r.Chart)
	if err != nil {
		return nil
	}
	return up
}
