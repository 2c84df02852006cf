package commands

import "fmt"

// The words of the grammar: each command's summary, example, group, who may run it (the rules
// of authz.go) and more examples, and, where it reads as words, its argument pattern. Register
// gives a command its words from commandHelps; every command of the grammar has an entry
// (TestEveryCommandHasHelp): a new command says here what it does and who may run it.

// helpGroups are the groups `help` lists, in order.
var helpGroups = []string{"Incidents", "Silences", "Pipelines", "Checkpoint repairs", "Audit and help"}

// helpOther is the group of a command without one.
const helpOther = "Other"

// Who may, in the words of authz.go's levels.
const (
	mayMember  = "anyone who may use commands in this channel (slack.allowed_channels)"
	maySteward = "the remediators of the pipelines it concerns (slack.remediators, pipelines[].remediators); anyone when nobody is named for them"
	// mayLabelSilence: a label silence hides alerts before anyone sees them.
	mayLabelSilence = "the remediators of the pipeline its pipeline=NAME matcher names, else slack.remediators; anyone when nobody is named"
	mayRemediator   = "only the remediators of the pipeline (slack.remediators, pipelines[].remediators); nobody when none is named"
)

type commandHelp struct {
	args     string // Command.Args, for the commands whose pattern reads as words ("ID by DURATION")
	summary  string // Command.Summary
	example  string // Command.Example
	group    string
	may      string
	examples []string // more than Command.Example
}

var commandHelps = map[string]commandHelp{
	"incident list": {summary: "open incidents of this channel, newest first, a page at a time; all: of every channel you are a member of",
		example: "incident list mine sev1", group: "Incidents", may: mayMember,
		examples: []string{"incident list", "incident list all acked", "incident list pipeline=sms-replies"}},
	"incident show": {summary: "an incident with its alerts and timeline",
		example: "incident show INC-42", group: "Incidents", may: mayMember + "; an incident of another channel: its members"},
	"incident ack": {summary: "acknowledge an incident",
		example: "incident ack INC-42", group: "Incidents", may: mayMember},
	"incident resolve": {summary: "resolve an incident",
		example: "incident resolve INC-42 checkpoint ACL restored", group: "Incidents", may: maySteward},
	"incident unack": {summary: "take an acknowledgement back: escalation resumes at its next level",
		example: "incident unack INC-42", group: "Incidents", may: mayMember},
	"incident reopen": {summary: "open a resolved incident again (within its retention); its thread continues",
		example: "incident reopen INC-42", group: "Incidents", may: maySteward},
	"incident unmerge": {summary: "undo the merge of FROM: it opens again with its keys, alerts and count",
		example: "incident unmerge INC-43", group: "Incidents", may: maySteward},
	"incident merge": {args: "FROM INTO", summary: "thread FROM and its future duplicates into INTO",
		example: "incident merge INC-43 INC-42", group: "Incidents", may: maySteward},
	"incident severity": {summary: "set the incident's severity by hand (alerts no longer change it)",
		example: "incident severity INC-42 SEV1", group: "Incidents", may: mayMember},
	"incident assign": {summary: "make someone the incident's owner (or nobody)",
		example: "incident assign INC-42 me", group: "Incidents", may: mayMember,
		examples: []string{"incident assign INC-42 @bob", "incident assign INC-42 nobody"}},
	"incident postmortem": {summary: "a Markdown postmortem draft in the incident's thread: summary, impact, the full timeline, actions, follow-ups",
		example: "incident postmortem INC-42", group: "Incidents", may: mayMember},
	"incident diagnose": {summary: "diagnose the incident's pipeline again; the verdict goes into its thread",
		example: "incident diagnose INC-42", group: "Incidents", may: mayMember},
	"incident silence": {args: "[ID] for DURATION|until morning [reason…]",
		summary: "quiet an incident: alerts are still counted, nothing is posted until the silence ends",
		example: "incident silence INC-42 for 2h deploy in progress", group: "Silences", may: mayMember,
		examples: []string{"incident silence INC-42 until morning"}},
	"silence": {args: "LABEL=VALUE[,LABEL=~REGEX,LABEL!=VALUE,LABEL!~REGEX…] [from TIME] for DURATION [reason…] [--preview]",
		summary: "keep matching alerts from opening or joining incidents, now or from TIME (HH:MM or 2026-12-24T22:00 in slack.time_zone); --preview lists what it would hold",
		example: "silence alertname=KafkaLag,pipeline=sms-replies from 22:00 for 2h broker maintenance", group: "Silences", may: mayLabelSilence,
		examples: []string{"silence alertname=~Kafka.*,cluster=main for 30m",
			"silence alertname=KafkaLag,env!=staging from 22:00 for 2h broker upgrade", "silence alertname=KafkaLag for 1h --preview"}},
	"silence extend": {args: "ID by DURATION", summary: "make an active silence last longer",
		example: "silence extend SIL-3 by 1h", group: "Silences", may: "a label silence: " + mayLabelSilence + "; an incident's silence: " + mayMember},
	"silence expire": {summary: "end a silence now",
		example: "silence expire SIL-3", group: "Silences", may: "a label silence: " + mayLabelSilence + "; an incident's silence: " + mayMember},
	"silences": {summary: "the silences in force, with the alerts each silenced",
		example: "silences", group: "Silences", may: mayMember},
	"status": {summary: "pipeline health: probes, last commit, lag",
		example: "status", group: "Pipelines", may: mayMember},
	"lag": {args: "PIPELINE | GROUP TOPIC [--cluster NAME]", summary: "offsets, lag in records and time, group state and status",
		example: "lag sms-replies", group: "Pipelines", may: mayMember,
		examples: []string{"lag sms-replies-prod client.replies.sms --cluster main"}},
	"groups": {args: "TOPIC [--cluster NAME]", summary: "every group consuming a topic: state, members, lag, commit movement",
		example: "groups client.replies.sms", group: "Pipelines", may: mayMember},
	"diagnose": {summary: "every check at once: probable causes ranked, with evidence and next steps",
		example: "diagnose sms-replies", group: "Pipelines", may: mayMember},
	"logs": {summary: "checkpoint trouble in the driver logs (tail only, secrets masked)",
		example: "logs sms-replies", group: "Pipelines", may: mayMember},
	"checkpoint": {summary: "read the Spark checkpoint: batches, offsets, pending records, findings",
		example: "checkpoint sms-replies", group: "Pipelines", may: mayMember},
	"probe": {summary: "probe checkpoint access now and show every step",
		example: "probe sms-replies", group: "Pipelines", may: mayMember, examples: []string{"probe all"}},
	"probe history": {summary: "recent probe results",
		example: "probe history sms-replies", group: "Pipelines", may: mayMember},
	"watch": {args: "PIPELINE [for DURATION]", summary: "after a fix: report when progress resumes (default for 30m)",
		example: "watch sms-replies for 30m", group: "Pipelines", may: mayMember},
	"chart": {args: "PIPELINE [for DURATION]",
		summary: "a chart of the pipeline's progress (records waiting, group lag, oldest record's age, commits, the incident's events), posted here",
		example: "chart sms-replies for 2h", group: "Pipelines", may: mayMember},
	"checkpoint backup": {summary: "copy the checkpoint to backup_location with a verified SHA-256 manifest (one at a time per pipeline)",
		example: "checkpoint backup sms-replies", group: "Checkpoint repairs", may: maySteward},
	"checkpoint backups": {summary: "the pipeline's backups: age, size, verification, quarantined files",
		example: "checkpoint backups sms-replies", group: "Checkpoint repairs", may: mayMember},
	"checkpoint repair": {args: "PIPELINE [--confirm PLAN [--force REASON…]]",
		summary: "dry run: the minimal fragment to quarantine, as plan PLAN; --confirm PLAN moves exactly that into the backup",
		example: "checkpoint repair sms-replies", group: "Checkpoint repairs", may: "the dry run: " + mayMember + "; --confirm and --force: " + mayRemediator,
		examples: []string{"checkpoint repair sms-replies --confirm P-7", "checkpoint repair sms-replies --confirm P-7 --force the driver is stopped"}},
	"checkpoint restore": {args: "PIPELINE [BACKUP] [--confirm PLAN [--force REASON…]]",
		summary: "dry run: put quarantined files back, verified against the quarantine's manifest; --confirm PLAN does it",
		example: "checkpoint restore sms-replies", group: "Checkpoint repairs", may: "the dry run: " + mayMember + "; --confirm and --force: " + mayRemediator,
		examples: []string{"checkpoint restore sms-replies 20261130T104105Z --confirm P-8"}},
	"audit": {summary: "who did what: the audit trail of a pipeline or an incident, or all (remediators only)",
		example: "audit sms-replies", group: "Audit and help", may: mayRemediator + "; the whole trail: slack.remediators",
		examples: []string{"audit INC-42", "audit"}},
	"help": {summary: "list the commands by group; with a command: its usage, examples and who may run it",
		example: "help", group: "Audit and help", may: mayMember, examples: []string{"help incident", "help incident resolve"}},
}

// helpLine is a command's line in `help`'s list.
func helpLine(usage string, c *Command) string {
	return fmt.Sprintf("%-45s %s", usage, c.Summary)
}

// helpList is `help`'s answer: the commands' lines by group, in helpGroups' order.
func helpList(name string, byGroup map[string][]string) Reply {
	var sections []Section
	for _, g := range append(helpGroups, helpOther) {
		if lines := byGroup[g]; len(lines) > 0 {
			sections = append(sections, Section{Title: g, Lines: lines, Pre: true})
		}
	}
	return Reply{Text: "streamwatch commands (`" + name + " help COMMAND` shows its examples and who may run it)", Sections: sections}
}

// helpNoMatch is `help WORD` when no command starts with want.
func helpNoMatch(name, want string) error {
	return &UsageError{Msg: fmt.Sprintf("no command starts with %q", want), Usages: []string{name + " help"}}
}

// helpCommand is everything help knows of c: its usage, every example and who may run it.
func helpCommand(name string, c *Command) Reply {
	ch := commandHelps[c.Path]
	var examples []string
	for _, e := range append([]string{c.Example}, ch.examples...) {
		if e != "" {
			examples = append(examples, name+" "+e)
		}
	}
	sections := []Section{{Title: "Usage", Lines: []string{c.Usage(name)}, Pre: true}}
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
