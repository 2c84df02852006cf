package slackfake

import (
	"net/http"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// TestFileUploadSharesInAThread: slack-go's three-step upload (files.getUploadURLExternal, the
// bytes, files.completeUploadExternal) shares the file as a reply in a thread, where it can
// be read back whole.
func TestFileUploadSharesInAThread(t *testing.T) {
	s := start(t, Options{})
	ctx := timeout(t)
	c := api(s)
	_, root, err := c.PostMessageContext(ctx, channel, slack.MsgOptionText("INC-1", false))
	if err != nil {
		t.Fatal(err)
	}
	content := "# Postmortem\n\n| time | event |\n" + strings.Repeat("line é\n", 5000)
	f, err := c.UploadFileContext(ctx, slack.UploadFileParameters{Content: content, FileSize: len(content), Filename: "INC-1-postmortem.md",
		Title: "Postmortem draft", Channel: channel, ThreadTimestamp: root, InitialComment: "the draft"})
	if err != nil {
		t.Fatal(err)
	}
	files := s.Files()
	if len(files) != 1 || files[0].ID != f.ID || string(files[0].Content) != content || files[0].Name != "INC-1-postmortem.md" ||
		files[0].Title != "Postmortem draft" || files[0].Channel != channel || files[0].ThreadTS != root {
		t.Fatalf("shared %+v (summary %+v)", files, f)
	}
	th := s.Thread(channel, root)
	if len(th) != 2 || len(th[1].Files) != 1 || th[1].Files[0] != f.ID || th[1].Text != "the draft" || th[1].TS != files[0].MessageTS {
		t.Fatalf("thread %+v", th)
	}
	for _, m := range []string{"files.getUploadURLExternal", "file_upload", "files.completeUploadExternal"} {
		if calls := s.CallsTo(m); len(calls) != 1 || calls[0].Status != http.StatusOK {
			t.Fatalf("%s calls: %+v", m, calls)
		}
	}
}

// TestFileUploadRefusals: what Slack (or the fake, stricter) refuses.
func TestFileUploadRefusals(t *testing.T) {
	s := start(t, Options{Channels: map[string]string{channel: "alerts"}})
	ctx := timeout(t)
	c := api(s)
	if _, err := c.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "a.md", FileSize: 3}); err != nil {
		t.Fatal(err)
	}
	u, _ := c.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "a.md", FileSize: 3})
	// Completing a file whose bytes never arrived.
	if _, err := c.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{Files: []slack.FileSummary{{ID: u.FileID}},
		Channel: channel}); err == nil || !strings.Contains(err.Error(), "file_not_found") {
		t.Fatalf("completing without the bytes: %v", err)
	}
	// More bytes than announced.
	if err := c.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: u.UploadURL, Content: "four", Filename: "a.md"}); err == nil {
		t.Fatal("an upload of the wrong size was taken")
	}
	if err := c.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: u.UploadURL, Content: "abc", Filename: "a.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{Files: []slack.FileSummary{{ID: u.FileID}},
		Channel: channel, ThreadTimestamp: "1.000001"}); err == nil || !strings.Contains(err.Error(), "thread_not_found") {
		t.Fatalf("a thread that does not exist: %v", err)
	}
	if _, err := c.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{Files: []slack.FileSummary{{ID: u.FileID}},
		Channel: "C0NOPE"}); err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Fatalf("a channel that does not exist: %v", err)
	}
	if _, err := c.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{Files: []slack.FileSummary{{ID: u.FileID}},
		Channel: channel}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{Files: []slack.FileSummary{{ID: u.FileID}},
		Channel: channel}); err == nil || !strings.Contains(err.Error(), "file_not_found") {
		t.Fatalf("completing twice: %v", err)
	}
	if len(s.Files()) != 1 {
		t.Fatalf("files %+v", s.Files())
	}
}

// TestFileUploadAltText: an image uploaded with alt_txt (files.getUploadURLExternal's, as
// Slack documents it) keeps it; more than 1,000 characters is alt_txt_too_large.
func TestFileUploadAltText(t *testing.T) {
	s := start(t, Options{})
	ctx := timeout(t)
	c := api(s)
	png := "\x89PNG\r\n\x1a\nnot really"
	if _, err := c.UploadFileContext(ctx, slack.UploadFileParameters{Reader: strings.NewReader(png), FileSize: len(png), Filename: "chart.png",
		Title: "Progress", Channel: channel, AltTxt: "Chart of sms-replies: records waiting peaked at 1,240."}); err != nil {
		t.Fatal(err)
	}
	if f := s.Files(); len(f) != 1 || f[0].AltText != "Chart of sms-replies: records waiting peaked at 1,240." || string(f[0].Content) != png {
		t.Fatalf("shared %+v", f)
	}
	_, err := c.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "a.png", FileSize: 3, AltTxt: strings.Repeat("é", 1001)})
	if err == nil || !strings.Contains(err.Error(), "alt_txt_too_large") {
		t.Fatalf("1,001 characters of alt text: %v", err)
	}
}
