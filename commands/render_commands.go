package commands

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// argsUsage refuses a command given too few or too many arguments, with its usage.
func argsUsage(c *Command, usage string) error {
	return &UsageError{Msg: fmt.Sprintf("%s takes %s", c.Path, argCount(c)), Usages: []string{usage}}
}

func argCount(c *Command) string {
	switch {
	case c.Args == "":
		return "no arguments"
	default:
		return "arguments " + c.Args
	}
}

// unknownCommand refuses words that name no command of the grammar of the bot called name,
// with the usages of the commands that start like them (none: the hint to ask for help).
func unknownCommand(name string, words, usages []string) error {
	ue := &UsageError{Msg: fmt.Sprintf("unknown command %q", strings.Join(words, " ")), Usages: usages}
	if len(ue.Usages) == 0 {
		ue.Usages = []string{name + " help"}
	}
	sort.Strings(ue.Usages)
	return ue
}

// usageReply answers wrong input: what was wrong, then the usages.
func usageReply(ue *UsageError) Reply {
	lines := []string{"Usage:"}
	for _, u := range ue.Usages {
		lines = append(lines, "  "+u)
	}
	return Reply{Text: ue.Msg + ".", Sections: []Section{{Lines: lines, Pre: true}}, Usage: true}
}

// errorReply answers a command that failed or was refused: the error in one sentence, and a
// refused remediation's details.
func errorReply(err error) Reply {
	reply := Reply{Text: "Sorry: " + strings.TrimSuffix(errText(err), ".") + "."}
	var re *RefusalError
	if errors.As(err, &re) {
		if _, details := RefusalText(re); len(details) > 0 {
			reply.Sections = []Section{{Lines: details, Pre: true}}
		}
	}
	return reply
}
