package demo

import (
	"bytes"
	"fmt"
	"image"
	_ "image/png" // the charts
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/streamwatch/streamwatch/bot/slackfake"
)

// transcript prints what happens in the fake workspace as a readable channel log: root
// messages, their thread replies indented under them, ephemeral replies as "(only NAME)",
// edited messages once per visible change, and the demo's own progress lines in between.
type transcript struct {
	mu       sync.Mutex
	w        io.Writer
	slack    *slackfake.Server
	people   roster
	channels map[string]string // followed channel ID → name

	seen        map[string]string // channel/ts → what was last printed of it
	ephemerals  int               // how many of Slack's ephemerals were printed
	lastThread  string            // "channel/root-ts" of the thread the last printed message belongs to
	lastChannel string            // the channel of the last printed root
	out         string            // where shared images are written
}

// newTranscript follows the channels (ID → name) of the fake.
func newTranscript(w io.Writer, s *slackfake.Server, people roster, channels map[string]string) *transcript {
	return &transcript{w: w, slack: s, people: people, channels: channels, seen: map[string]string{}}
}

// Step prints a progress line.
func (t *transcript) Step(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "\n▶ %s\n", fmt.Sprintf(format, args...))
	t.lastThread = ""
}

// Note prints a detail line under the current step.
func (t *transcript) Note(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "  · %s\n", fmt.Sprintf(format, args...))
	t.lastThread = ""
}

// Typed prints what a person typed (a slash command is not a message in the channel).
func (t *transcript) Typed(user, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "  %s types %s\n", t.people.name(user), text)
	t.lastThread = ""
}

// Clicked prints a click on a button.
func (t *transcript) Clicked(user, label string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "  %s clicks %s\n", t.people.name(user), label)
	t.lastThread = ""
}

// Pending reports whether Flush would print something.
func (t *transcript) Pending() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, it := range t.collect() {
		if prev, ok := t.seen[it.key]; !ok || prev != it.shown {
			return true
		}
	}
	eph := t.slack.Ephemerals()
	for _, e := range eph[min(t.ephemerals, len(eph)):] {
		if _, ok := t.channels[e.Channel]; ok {
			return true
		}
	}
	return false
}

// item is one message of the fake as the transcript shows it.
type item struct {
	key, channel, ts, thread string
	user                     string // a person's message or an ephemeral's recipient; "" for the bot
	ephemeral                bool
	lines                    []string
	shown                    string // what identifies a visible change
	summary                  string // one line for an edit of a root
	files                    []string
}

// collect renders every message of the followed channels, oldest first per channel.
func (t *transcript) collect() []item {
	var out []item
	for ch := range t.channels {
		for _, m := range t.slack.Messages(ch) {
			it := item{key: ch + "/" + m.TS, channel: ch, ts: m.TS, thread: m.ThreadTS,
				lines: t.people.renderMessage(m.Text, m.Blocks), files: m.Files}
			if m.BotID == "" {
				it.user = m.User
			} else if m.ThreadTS == "" && !headed(m.Blocks) {
				it.user = botUser // a bot message that is not an incident: say who posted it
			}
			it.shown = strings.Join(it.lines, "\n")
			if m.ThreadTS == "" && m.BotID != "" {
				// A root's fields (last seen…) change with every duplicate; its text says what
				// matters (status, count), and its buttons what one can do now.
				it.summary = strings.Join(t.people.mrkdwn(m.Text), " ")
				if b := buttons(it.lines); b != "" {
					it.summary += "   " + b
				}
				it.shown = it.summary
			}
			out = append(out, it)
		}
	}
	return out
}

// buttons is the last "[A] [B]" line of rendered blocks (a root's actions come after its
// links), if any.
func buttons(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := lines[i]; strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			return l
		}
	}
	return ""
}

// Flush prints what appeared or changed since the last Flush.
func (t *transcript) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	var fresh, edited []item
	for _, it := range t.collect() {
		prev, ok := t.seen[it.key]
		switch {
		case !ok:
			fresh = append(fresh, it)
		case prev != it.shown:
			edited = append(edited, it)
		}
		t.seen[it.key] = it.shown
	}
	eph := t.slack.Ephemerals()
	for _, e := range eph[min(t.ephemerals, len(eph)):] {
		if _, ok := t.channels[e.Channel]; !ok {
			continue
		}
		fresh = append(fresh, item{channel: e.Channel, ts: e.TS, thread: e.ThreadTS, user: e.User, ephemeral: true,
			lines: t.people.renderMessage(e.Text, e.Blocks)})
	}
	t.ephemerals = len(eph)
	slices.SortStableFunc(fresh, func(a, b item) int { return compareTS(a.ts, b.ts) })
	for _, it := range fresh {
		t.print(it)
	}
	for _, it := range edited {
		t.printEdit(it)
	}
}

func (t *transcript) print(it item) {
	switch {
	case it.thread == "" && !it.ephemeral:
		if it.channel != t.lastChannel {
			fmt.Fprintf(t.w, "\n── #%s ──\n", t.channels[it.channel])
			t.lastChannel = it.channel
		}
		fmt.Fprintln(t.w)
		t.lastThread = it.channel + "/" + it.ts
	case it.thread != "":
		if thread := it.channel + "/" + it.thread; thread != t.lastThread {
			fmt.Fprintf(t.w, "   (in the thread of %s)\n", t.rootTitle(it.channel, it.thread))
			t.lastThread = thread
		}
	default:
		t.lastThread = ""
	}
	first, rest := "", "   "
	switch {
	case it.ephemeral:
		first = "   (only " + t.people.name(it.user) + ") "
		rest = "     "
	case it.thread != "":
		first, rest = "   └ ", "     "
	}
	if it.user != "" && !it.ephemeral {
		first += t.people.name(it.user) + ": "
	}
	if len(it.lines) == 0 {
		it.lines = []string{"(empty message)"}
	}
	for i, l := range it.lines {
		if i == 0 {
			fmt.Fprintln(t.w, strings.TrimRight(first+l, " "))
		} else {
			fmt.Fprintln(t.w, strings.TrimRight(rest+l, " "))
		}
	}
	for _, id := range it.files {
		for _, l := range t.file(id) {
			fmt.Fprintln(t.w, rest+l)
		}
	}
}

// file describes a shared file: its name, and an image's size and alt text; an image is
// written to the transcript's folder, so that it can be opened.
func (t *transcript) file(id string) []string {
	for _, f := range t.slack.Files() {
		if f.ID != id {
			continue
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(f.Content))
		if err != nil {
			return []string{fmt.Sprintf("📎 %s (%d bytes)", f.Name, len(f.Content))}
		}
		lines := []string{fmt.Sprintf("📈 %s (%s, %d×%d)", f.Name, strings.ToUpper(format), cfg.Width, cfg.Height),
			"   alt text: " + f.AltText}
		path := filepath.Join(t.out, filepath.Base(f.Name))
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			return append(lines, "   (not written: "+err.Error()+")")
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		return append(lines, "   written to "+path)
	}
	return []string{"📎 (a file that is not shared: " + id + ")"}
}

func (t *transcript) printEdit(it item) {
	if it.summary != "" {
		fmt.Fprintf(t.w, "   ✎ the message now reads: %s\n", it.summary)
		t.lastThread = ""
		return
	}
	fmt.Fprintf(t.w, "   ✎ a message was updated:\n")
	for _, l := range it.lines {
		fmt.Fprintln(t.w, strings.TrimRight("     "+l, " "))
	}
	t.lastThread = ""
}

func (t *transcript) rootTitle(ch, ts string) string {
	m, ok := t.slack.Message(ch, ts)
	if !ok {
		return "a message"
	}
	lines := t.people.mrkdwn(m.Text)
	if len(lines) == 0 {
		return "a message"
	}
	title := lines[0]
	if i := strings.Index(title, " ("); i > 0 {
		title = title[:i]
	}
	return title
}

// compareTS orders Slack timestamps ("1764512345.000100").
func compareTS(a, b string) int {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	ai, _ := strconv.ParseInt(as, 10, 64)
	bi, _ := strconv.ParseInt(bs, 10, 64)
	if ai != bi {
		if ai < bi {
			return -1
		}
		return 1
	}
	af2, _ := strconv.ParseInt(af, 10, 64)
	bf2, _ := strconv.ParseInt(bf, 10, 64)
	switch {
	case af2 < bf2:
		return -1
	case af2 > bf2:
		return 1
	}
	return 0
}
