package bot

import (
	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/alerts"
)

// An alert's own links (Alertmanager's generatorURL, Grafana's dashboard, panel and silence
// pages, a runbook_url annotation) go on the incident's root as link buttons. Senders choose
// them, so only http and https URLs with a host and without credentials pass; a button's URL
// is a JSON string Slack opens, never mrkdwn, so nothing in it can mention or format.

// linkMap turns an alert's links into what state keeps: kind → URL, as sent.
func linkMap(l alerts.Links) map[string]string {
	if l == (alerts.Links{}) {
		return nil
	}
	m := map[string]string{}
	for kind, u := range map[string]string{"generator": l.Generator, "dashboard": l.Dashboard, "panel": l.Panel,
		"silence": l.Silence, "runbook": l.Runbook} {
		if u != "" {
			m[kind] = u
		}
	}
	return m
}

// safeURL is the link as the root shows it: alerts.SafeURL, "" for anything else.
func safeURL(u string) string { return alerts.SafeURL(u) }

// linkButtons are the root's link buttons, one per kind with a safe URL.
func linkButtons(links map[string]string) []slack.BlockElement {
	var out []slack.BlockElement
	for _, k := range commands.LinkKinds {
		u := safeURL(links[k.Kind])
		if u == "" {
			continue
		}
		b := slack.NewButtonBlockElement("link_"+k.Kind, "", slack.NewTextBlockObject(slack.PlainTextType, k.Label, false, false))
		b.URL = u
		out = append(out, b)
	}
	return out
}
