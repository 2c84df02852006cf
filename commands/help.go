package commands

import (
	"context"
	"fmt"
	"strings"
)

// What `help` says beyond each command's usage and example: its group, who may run it (the
// rules of authz.go) and more examples. Every command of the grammar has an entry
// (TestEveryCommandHasHelp): a new command says here who may run it.

// helpGroups are the groups `help` lists, in order.
var helpGroups = []string{"Incidents", "Silences", "Pipelines", "Checkpoint repairs", "Audit and help"}

// Who may, in the words of authz.go's levels.
const (
	mayMember  = "anyone who may use commands in this channel (slack.allowed_channels)"
	maySteward = "the remediators of the pipelines it concerns (slack.remediators, pipelines[].remediators); anyone when nobody is named for them"
	// mayLabelSilence: a label silence hides alerts before anyone sees them.
	mayLabelSilence = "the remediators of the pipeline its pipeline=NAME matcher names, else slack.remediators; anyone when nobody is named"
	mayRemediator   = "only the remediators of the pipeline (slack.remediators, pipelines[].remediators); nobody when none is named"
)

type commandHelp struct {
	group    string
	may      string
	examples []string // more than Command.Example
}

var commandHelps = map[string]commandHelp{
	"incident list": {group: "Incidents", may: mayMember,
		examples: []string{"incident list", "incident list all acked", "incident list pipeline=sms-replies"}},
	"incident show":       {group: "Incidents", may: mayMember + "; an incident of another channel: its members"},
	"incident ack":        {group: "Incidents", may: mayMember},
	"incident resolve":    {group: "Incidents", may: maySteward},
	"incident unack":      {group: "Incidents", may: mayMember},
	"incident reopen":     {group: "Incidents", may: maySteward},
	"incident unmerge":    {group: "Incidents", may: maySteward},
	"incident merge":      {group: "Incidents", may: maySteward},
	"incident severity":   {group: "Incidents", may: mayMember},
	"incident assign":     {group: "Incidents", may: mayMember, examples: []string{"incident assign INC-42 @bob", "incident assign INC-42 nobody"}},
	"incident postmortem": {group: "Incidents", may: mayMember},
	"incident diagnose":   {group: "Incidents", may: mayMember},
	"incident silence":    {group: "Silences", may: mayMember, examples: []string{"incident silence INC-42 until morning"}},
	"silence": {group: "Silences", may: mayLabelSilence, examples: []string{"silence alertname=~Kafka.*,cluster=main for 30m",
		"silence alertname=KafkaLag,env!=staging from 22:00 for 2h broker upgrade", "silence alertname=KafkaLag for 1h --preview"}},
	"silence extend":     {group: "Silences", may: "a label silence: " + mayLabelSilence + "; an incident's silence: " + mayMember},
	"silence expire":     {group: "Silences", may: "a label silence: " + mayLabelSilence + "; an incident's silence: " + mayMember},
	"silences":           {group: "Silences", may: mayMember},
	"status":             {group: "Pipelines", may: mayMember},
	"lag":                {group: "Pipelines", may: mayMember, examples: []string{"lag sms-replies-prod client.replies.sms --cluster main"}},
	"groups":             {group: "Pipelines", may: mayMember},
	"diagnose":           {group: "Pipelines", may: mayMember},
	"logs":               {group: "Pipelines", may: mayMember},
	"checkpoint":         {group: "Pipelines", may: mayMember},
	"probe":              {group: "Pipelines", may: mayMember, examples: []string{"probe all"}},
	"probe history":      {group: "Pipelines", may: mayMember},
	"watch":              {group: "Pipelines", may: mayMember},
	"chart":              {group: "Pipelines", may: mayMember},
	"checkpoint backup":  {group: "Checkpoint repairs", may: maySteward},
	"checkpoint backups": {group: "Checkpoint repairs", may: mayMember},
	"checkpoint repair": {group: "Checkpoint repairs", may: "the dry run: " + mayMember + "; --confirm and --force: " + mayRemediator,
		examples: []string{"checkpoint repair sms-replies --confirm P-7", "checkpoint repair sms-replies --confirm P-7 --force the driver is stopped"}},
	"checkpoint restore": {group: "Checkpoint repairs", may: "the dry run: " + mayMember + "; --confirm and --force: " + mayRemediator,
		examples: []string{"checkpoint restore sms-replies 20261130T104105Z --confirm P-8"}},
	"audit": {group: "Audit and help", may: mayRemediator + "; the whole trail: slack.remediators", examples: []string{"audit INC-42", "audit"}},
	"help":  {group: "Audit and help", may: mayMember, examples: []string{"help incident", "help incident resolve"}},
}

// help answers `help` with every command by group, `help COMMAND` with the command's usage,
// every example and who may run it, and `help WORD` with the commands that start with it.
func (h *Handler) help(_ context.Context, _ Request, args []string) (Reply, error) {
	want := strings.ToLower(strings.Join(args, " "))
	for _, c := range h.Commands() {
		if want != "" && c.Path == want {
			return h.helpCommand(c), nil
		}
	}
	byGroup := map[string][]string{}
	for _, c := range h.Commands() {
		if want != "" && !strings.HasPrefix(c.Path, want) {
			continue
		}
		g := commandHelps[c.Path].group
		if g == "" {
			g = "Other"
		}
		byGroup[g] = append(byGroup[g], fmt.Sprintf("%-45s %s", c.Usage(h.Name), c.Summary))
	}
	if len(byGroup) == 0 {
		return Reply{}, &UsageError{Msg: fmt.Sprintf("no command starts with %q", want), Usages: []string{h.Name + " help"}}
	}
	var sections []Section
	for _, g := range append(helpGroups, "Other") {
		if lines := byGroup[g]; len(lines) > 0 {
			sections = append(sections, Section{Title: g, Lines: lines, Pre: true})
		}
	}
	return Reply{Text: "streamwatch commands (`" + h.Name + " help COMMAND` shows its examples and who may run it)", Sections: sections}, nil
}

// helpCommand is everything help knows of c.
func (h *Handler) helpCommand(c *Command) Reply {
	ch := commandHelps[c.Path]
	var examples []string
	for _, e := range append([]string{c.Example}, ch.examples...) {
		if e != "" {
			examples = append(examples, h.Name+" "+e)
		}
	}
	sections := []Section{{Title: "Usage", Lines: []string{c.Usage(h.Name)}, Pre: true}}
	if len(examples) > 0 {
		sections = append(sections, Section{Title: "Examples", Lines: examples, Pre: true})
	}
	may := ch.may
	if may == "" {
		may = "see the README's security section"
	}
	sections = append(sections, Section{Title: "Who may run it", Lines: []string{may}})
	return Reply{Text: c.Path + ": " + c.Summary, Sections: sections}
}
