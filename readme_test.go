package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/config"
	"gopkg.in/yaml.v3"
)

// TestREADMECommandsAreInTheGrammar: every command the README's reference lists is accepted
// by the grammar, with its placeholders filled in.
func TestREADMECommandsAreInTheGrammar(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	section := readme[strings.Index(readme, "## Commands"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	fill := strings.NewReplacer("[ID]", "INC-1", "ID", "INC-1", "FROM", "INC-2", "INTO", "INC-1",
		"[PIPELINE\\|ID]", "sms-replies", "PIPELINE", "sms-replies", "GROUP", "sms-replies-v2", "TOPIC", "client.replies.sms",
		"[--cluster NAME]", "--cluster main", "[note…]", "fixed the ACL", "[for DURATION]", "for 30m",
		"[BACKUP]", "20261130T104105Z", "PLAN", "P-3", "[--force REASON…]", "--force the query was stopped by hand",
		"for DURATION", "for 2h", "[reason…]", "deploy in progress", "SEV1..SEV5", "SEV1", "@USER\\|me\\|nobody", "me",
		"LABEL=VALUE[,LABEL=~REGEX…]", "alertname=KafkaLag,pipeline=~sms-.*")
	h := commands.New("/streamwatch", nil)
	h.RegisterHealth(nil)
	h.RegisterKafka(nil)
	h.RegisterCheckpoint(nil)
	h.RegisterDiagnose(nil)
	h.RegisterWatch(nil)
	h.RegisterRemediation(nil, nil)
	h.RegisterAudit(nil)
	h.RegisterIncidentDiagnose(nil)
	h.RegisterLifecycle(nil)
	h.RegisterSilences(nil)
	h.RegisterPostmortem(nil)
	h.RegisterChart(nil, nil)
	rows := row.FindAllStringSubmatch(section, -1)
	if len(rows) < 15 {
		t.Fatalf("found %d commands in the README's reference", len(rows))
	}
	listed := map[string]bool{}
	for _, m := range rows {
		text := fill.Replace(m[1])
		c, _, err := h.Parse(text)
		if err != nil {
			t.Errorf("README command %q (as %q): %v", m[1], text, err)
			continue
		}
		listed[c.Path] = true
	}
	for _, c := range h.Commands() {
		if !listed[c.Path] {
			t.Errorf("command %q is not in the README's reference", c.Path)
		}
	}
}

// TestDeployedConfigsPassCheckConfig: the Kubernetes ConfigMap's configuration is valid.
func TestDeployedConfigsPassCheckConfig(t *testing.T) {
	b, err := os.ReadFile("deploy/kubernetes/streamwatch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	found := false
	for {
		var doc struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind == "ConfigMap" {
			found = true
			if _, err := config.Parse([]byte(doc.Data["config.yaml"])); err != nil {
				t.Fatalf("the ConfigMap's config.yaml: %v", err)
			}
		}
	}
	if !found {
		t.Fatal("no ConfigMap in deploy/kubernetes/streamwatch.yaml")
	}
}
