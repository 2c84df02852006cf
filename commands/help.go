package commands

import (
	"context"
	"strings"
)

// help answers `help` with every command by group, `help COMMAND` with the command's usage,
// every example and who may run it, and `help WORD` with the commands that start with it. The
// words are render_help.go's.
func (h *Handler) help(_ context.Context, _ Request, args []string) (Reply, error) {
	want := strings.ToLower(strings.Join(args, " "))
	for _, c := range h.Commands() {
		if want != "" && c.Path == want {
			return helpCommand(h.Name, c), nil
		}
	}
	byGroup := map[string][]string{}
	for _, c := range h.Commands() {
		if want != "" && !strings.HasPrefix(c.Path, want) {
			continue
		}
		g := commandHelps[c.Path].group
		if g == "" {
			g = helpOther
		}
		byGroup[g] = append(byGroup[g], helpLine(c.Usage(h.Name), c))
	}
	if len(byGroup) == 0 {
		return Reply{}, helpNoMatch(h.Name, want)
	}
	return helpList(h.Name, byGroup), nil
}

// withWords gives c its words from render_help.go's table: Summary, Example and, for the
// commands whose argument pattern reads as words, Args.
func withWords(c *Command) {
	w, ok := commandHelps[c.Path]
	if !ok {
		return
	}
	c.Summary, c.Example = w.summary, w.example
	if w.args != "" {
		c.Args = w.args
	}
}
