package bot

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/integrations/alerts"
)

// An alert's own links (Alertmanager's generatorURL, Grafana's dashboard, panel and silence
// pages, a runbook_url annotation) go on the incident's root as link buttons. Senders choose
// them, so only http and https URLs with a host and without credentials pass; a button's URL
// is a JSON string Slack opens, never mrkdwn, so nothing in it can mention or format.

// linkKinds are the kinds of links, in the order the root shows them, with their labels.
var linkKinds = []struct{ kind, label string }{
	{"runbook", "Runbook"},
	{"dashboard", "Dashboard"},
	{"panel", "Panel"},
	{"generator", "Alert source"},
	{"silence", "Silence in Grafana"},
}

// maxLinkURL is Slack's limit on a button's url.
const maxLinkURL = 3000

// linkMap turns an alert's links into what state keeps: kind → URL, as sent.
func linkMap(l alerts.Links) map[string]string {
	m := map[string]string{}
	for kind, u := range map[string]string{"generator": l.Generator, "dashboard": l.Dashboard, "panel": l.Panel,
		"silence": l.Silence, "runbook": l.Runbook} {
		if u != "" {
			m[kind] = u
		}
	}
	return m
}

// safeURL returns u when it is an http or https URL with a host, no credentials, no control
// characters or spaces and within Slack's length; otherwise "".
func safeURL(u string) string {
	u = strings.TrimSpace(u)
	if u == "" || len(u) > maxLinkURL || !utf8.ValidString(u) || strings.ContainsFunc(u, func(r rune) bool {
		return r <= ' ' || r == 0x7f || badControl(r) || r == '<' || r == '>' || r == '"'
	}) {
		return ""
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil || p.Opaque != "" {
		return ""
	}
	if s := strings.ToLower(p.Scheme); s != "http" && s != "https" {
		return ""
	}
	if out := p.String(); len(out) <= maxLinkURL {
		return out
	}
	return ""
}

// linkButtons are the root's link buttons, one per kind with a safe URL.
func linkButtons(links map[string]string) []slack.BlockElement {
	var out []slack.BlockElement
	for _, k := range linkKinds {
		u := safeURL(links[k.kind])
		if u == "" {
			continue
		}
		b := slack.NewButtonBlockElement("link_"+k.kind, "", slack.NewTextBlockObject(slack.PlainTextType, k.label, false, false))
		b.URL = u
		out = append(out, b)
	}
	return out
}
