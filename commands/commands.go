// Package commands holds streamwatch's command grammar and handlers (a file per family), the
// layout and text of every reply (render_*.go: sections, tables, buttons; render_event.go: the
// timeline's events) and each command's help (help.go). It knows no Slack types: the bot turns
// a slash command, a mention or a button into a Request and renders the Reply.
package commands

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/streamwatch/streamwatch/state"
)

// Request is one command as a person typed it, or as the button they clicked stands for it.
type Request struct {
	UserID    string
	UserName  string // display name when known, used instead of a mention
	ChannelID string
	ThreadTS  string // the thread the command was typed in, when known (mentions)
	Text      string // the words after the command name or the mention
	Via       string // how it came: command (slash command), mention or button; for the audit
}

// Actor names the person in replies and timelines without mentioning them.
func (r Request) Actor() string {
	if r.UserName != "" {
		return r.UserName
	}
	return r.UserID
}

// Reply is what a command answers. Sections render as blocks; Pre sections as monospace.
type Reply struct {
	Text     string
	Sections []Section
	Public   bool // visible to the channel; otherwise only to the person who asked
	Usage    bool // the input was not understood; Text says how to use the command
	Actions  []Action
	// File, when set, is shared in Slack as a file (a postmortem draft) before the reply is
	// shown; the bot words the reply as a failure when it cannot share it.
	File *File
	// Chart, when set, is drawn and shared in Slack as an image with its alt text (before
	// File, which may refer to it).
	Chart *Chart `json:",omitempty"`
}

// EncodeReply is r as it travels to the bot through the outbox (a note in an incident's
// thread, a notice): data, which the bot renders when it delivers it.
func EncodeReply(r Reply) string {
	b, _ := json.Marshal(encodedReply{Reply: &r})
	return string(b)
}

// DecodeReply is EncodeReply's reverse; ok is false for text that is not an encoded reply (a
// sentence, or a note an older version rendered before queueing it).
func DecodeReply(s string) (r Reply, ok bool) {
	if !strings.HasPrefix(s, `{"streamwatch_reply":`) {
		return Reply{}, false
	}
	var e encodedReply
	if json.Unmarshal([]byte(s), &e) != nil || e.Reply == nil {
		return Reply{}, false
	}
	return *e.Reply, true
}

type encodedReply struct {
	Reply *Reply `json:"streamwatch_reply"`
}

// Action is a button on a reply. Clicking it runs Command as the person who clicked.
type Action struct {
	ID      string // stable, e.g. "repair_confirm"
	Label   string
	Command string // the command text the click runs, e.g. "checkpoint repair sms-replies --confirm"
	Danger  bool
	Confirm string // a confirmation question; "" for none
}

// Section is one titled part of a reply: lines, then a table, then more lines. A Pre section
// shows in monospace, its table's columns aligned.
type Section struct {
	Title string
	Lines []string
	Table *Table
	After []string
	Pre   bool
}

// Text is the section's lines as a monospace block shows them: Lines, the table's rows with
// their columns aligned, After.
func (s Section) Text() []string {
	if s.Table == nil && len(s.After) == 0 {
		return s.Lines
	}
	out := append(append([]string(nil), s.Lines...), s.Table.Lines()...)
	return append(out, s.After...)
}

// Table is rows of cells under a header.
type Table struct {
	Header []string
	Rows   [][]string
	Right  []bool // the columns aligned to the right (numbers)
}

// Lines lays the table out in fixed-width columns two spaces apart, each as wide as its widest
// cell, trailing spaces trimmed.
func (t *Table) Lines() []string {
	if t == nil {
		return nil
	}
	widths := make([]int, len(t.Header))
	for i, h := range t.Header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range t.Rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	line := func(cells []string) string {
		var l strings.Builder
		for i, cell := range cells {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				l.WriteString("  ")
			}
			if i < len(t.Right) && t.Right[i] {
				l.WriteString(pad + cell)
			} else {
				l.WriteString(cell + pad)
			}
		}
		return strings.TrimRight(l.String(), " ")
	}
	out := []string{line(t.Header)}
	for _, row := range t.Rows {
		out = append(out, line(row))
	}
	return out
}

// Command is one entry of the grammar.
type Command struct {
	Path    string // words that select it, e.g. "incident merge"
	Args    string // argument synopsis, e.g. "FROM INTO"
	Summary string
	Example string
	Min     int // minimum number of arguments after Path
	Max     int // maximum number, -1 for any
	Run     func(ctx context.Context, req Request, args []string) (Reply, error)
}

// Usage is the one-line synopsis of c.
func (c *Command) Usage(prefix string) string {
	u := prefix + " " + c.Path
	if c.Args != "" {
		u += " " + c.Args
	}
	return u
}

// Handler answers commands.
type Handler struct {
	// Name is how commands are introduced in usage lines, e.g. "/streamwatch".
	Name      string
	Incidents Incidents
	// Authz says who remediates which pipeline (slack.remediators, pipelines[].remediators);
	// nil names nobody. See authz.go for the rules.
	Authz Authorizer
	// Directory says which channels a user is a member of, for incidents of other channels;
	// nil lets everyone see every channel.
	Directory Directory
	// Audit records every change, every remediation and every refusal; nil records nothing.
	Audit func(ctx context.Context, e state.AuditEntry)
	// Replication, when set, has a command's reply say when what it changed is not yet on
	// Redis's replicas (redis.min_replicas_acked; replicas.go).
	Replication Replication
	Now         func() time.Time
	// Location is where people read and type times: "from 22:00", the next working morning.
	// Nil is slack.time_zone (human.Zone, which a reload changes).
	Location *time.Location
	commands []*Command
	// silences, when set (RegisterSilences), add the silences in force to `status`.
	silences Silences

	diagnoser Diagnoser   // RegisterDiagnose's
	verdicts  Verdicts    // RegisterIncidentDiagnose's
	charts    ChartSource // RegisterChart's
	thread    Thread      // RegisterChart's
}

// New returns a Handler with the built-in grammar.
func New(name string, incidents Incidents) *Handler {
	h := &Handler{Name: name, Incidents: incidents, Now: time.Now}
	h.Register(&Command{Path: "help", Args: "[COMMAND]", Summary: "list the commands by group; with a command: its usage, examples and who may run it",
		Max: -1, Run: h.help, Example: "help"})
	h.registerIncidents()
	return h
}

// Register adds a command to the grammar.
func (h *Handler) Register(c *Command) {
	h.commands = append(h.commands, c)
	sort.SliceStable(h.commands, func(i, j int) bool {
		return len(strings.Fields(h.commands[i].Path)) > len(strings.Fields(h.commands[j].Path))
	})
}

// Commands lists the grammar in a stable order.
func (h *Handler) Commands() []*Command {
	out := append([]*Command(nil), h.commands...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Parse finds the command text names and its arguments. It returns an error saying what was
// wrong, with the matching usage, when the text does not fit the grammar.
func (h *Handler) Parse(text string) (*Command, []string, error) {
	words := strings.Fields(text)
	if len(words) == 0 {
		return h.find("help"), nil, nil
	}
	var family []*Command
	for _, c := range h.commands {
		path := strings.Fields(c.Path)
		if len(words) < len(path) {
			if strings.EqualFold(words[0], path[0]) {
				family = append(family, c)
			}
			continue
		}
		match := true
		for i, p := range path {
			if !strings.EqualFold(words[i], p) {
				match = false
				break
			}
		}
		if !match {
			if strings.EqualFold(words[0], path[0]) {
				family = append(family, c)
			}
			continue
		}
		args := words[len(path):]
		if len(args) < c.Min || (c.Max >= 0 && len(args) > c.Max) {
			return c, nil, argsUsage(c, c.Usage(h.Name))
		}
		return c, args, nil
	}
	var usages []string
	for _, c := range family {
		usages = append(usages, c.Usage(h.Name))
	}
	return nil, nil, unknownCommand(h.Name, words[:min(2, len(words))], usages)
}

func (h *Handler) find(path string) *Command {
	for _, c := range h.commands {
		if c.Path == path {
			return c
		}
	}
	return nil
}

// UsageError is wrong input: the reply shows Msg and the usages.
type UsageError struct {
	Msg    string
	Usages []string
}

func (e *UsageError) Error() string { return e.Msg }

// Handle runs one command and always returns a reply: wrong input gets usage, a failure a
// sentence, never a stack trace.
func (h *Handler) Handle(ctx context.Context, req Request) Reply {
	r, _ := h.Dispatch(ctx, req)
	return r
}

// Dispatch is Handle that also says which command of the grammar ran ("" when the text does
// not fit the grammar), for whoever measures commands: the text is parsed once.
func (h *Handler) Dispatch(ctx context.Context, req Request) (Reply, string) {
	c, args, err := h.Parse(req.Text)
	path := ""
	if err == nil {
		path = c.Path
	}
	return h.replicated(ctx, func(ctx context.Context) Reply { return h.run(ctx, req, c, args, err) }), path
}

func (h *Handler) run(ctx context.Context, req Request, c *Command, args []string, err error) Reply {
	if err == nil {
		var r Reply
		r, err = c.Run(ctx, req, args)
		if err == nil {
			return r
		}
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return usageReply(ue)
	}
	return errorReply(err)
}
