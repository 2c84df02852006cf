package config

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// leafKeys lists every key of the configuration as docs/config.md writes it:
// pipelines[].kafka.cluster, kafka.clusters.<name>.brokers.
func leafKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if yamlName(f) == "-" {
			continue // filled by Parse, not a key
		}
		p := prefix + yamlName(f)
		switch ft := f.Type; {
		case ft.Kind() == reflect.Struct && ft != durationType:
			keys = append(keys, leafKeys(ft, p+".")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, leafKeys(ft.Elem(), p+"[].")...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, leafKeys(ft.Elem(), p+".<name>.")...)
		default:
			keys = append(keys, p)
		}
	}
	return keys
}

// presentKeys adds the keys of n, written as leafKeys writes them, to out.
func presentKeys(n *yaml.Node, t reflect.Type, prefix string, out map[string]bool) {
	n = deref(n)
	switch {
	case t.Kind() == reflect.Struct && t != durationType && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			j, ok := fieldIndex(t, n.Content[i].Value)
			if !ok {
				continue
			}
			f := t.Field(j)
			p := prefix + yamlName(f)
			out[p] = true
			switch {
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct && deref(n.Content[i+1]).Kind == yaml.SequenceNode:
				for _, item := range deref(n.Content[i+1]).Content {
					presentKeys(item, f.Type.Elem(), p+"[].", out)
				}
			case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct && deref(n.Content[i+1]).Kind == yaml.MappingNode:
				m := deref(n.Content[i+1])
				for k := 1; k < len(m.Content); k += 2 {
					presentKeys(m.Content[k], f.Type.Elem(), p+".<name>.", out)
				}
			default:
				presentKeys(n.Content[i+1], f.Type, p+".", out)
			}
		}
	}
}

// commentedKeys are keys the sketch shows in a comment, as the other shape of a value: job_user
// is a uid and gids for a local checkpoint, a principal for abfss://.
var commentedKeys = map[string]string{
	"pipelines[].checkpoint.job_user.principal": `(abfss://: {principal: "<object id>"}`,
}

// TestFilesHaveEveryKey checks that the sketch (the shape every build must accept) and the
// example each show every key the Config types have.
func TestFilesHaveEveryKey(t *testing.T) {
	for _, file := range []string{"testdata/config-sketch.yaml", "../deploy/config.example.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		present := map[string]bool{}
		presentKeys(doc.Content[0], reflect.TypeFor[Config](), "", present)
		// Keys of another shape of a value, shown in a comment beside it.
		for key, comment := range commentedKeys {
			present[key] = present[key] || strings.Contains(string(data), comment)
		}
		for _, key := range leafKeys(reflect.TypeFor[Config](), "") {
			if !present[key] {
				t.Errorf("%s lacks %s", file, key)
			}
		}
	}
}

func TestDocsHaveEveryKey(t *testing.T) {
	data, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, key := range leafKeys(reflect.TypeFor[Config](), "") {
		if !strings.Contains(doc, "`"+key+"`") {
			t.Errorf("docs/config.md does not document `%s`", key)
		}
	}
	for _, env := range []string{EnvSlackBotToken, EnvSlackAppToken, EnvRedisURL, EnvWebhookToken, EnvSlackAPIURL} {
		if !strings.Contains(doc, "`"+env+"`") {
			t.Errorf("docs/config.md does not document `%s`", env)
		}
	}
}

// TestDefaultTags checks every default tag parses (applyDefaults panics otherwise) and that
// docs/config.md states each default next to its key.
func TestDefaultTags(t *testing.T) {
	applyDefaults(reflect.ValueOf(&Config{}).Elem())
	applyDefaults(reflect.ValueOf(&Pipeline{}).Elem())
	applyDefaults(reflect.ValueOf(&KafkaCluster{}).Elem())
	data, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "| `") {
			key, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			rows[key] = line
		}
	}
	var walk func(t reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			p := prefix + yamlName(f)
			if def, ok := f.Tag.Lookup("default"); ok {
				want := "`" + def + "`"
				if f.Type.Kind() == reflect.Slice {
					want = "`[" + strings.ReplaceAll(def, ",", ", ") + "]`"
				}
				if !strings.Contains(rows[p], want) {
					t.Errorf("docs/config.md row for `%s` does not give its default %s: %q", p, want, rows[p])
				}
			}
			switch ft := f.Type; {
			case ft.Kind() == reflect.Struct && ft != durationType:
				walk(ft, p+".")
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), p+"[].")
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), p+".<name>.")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
}
