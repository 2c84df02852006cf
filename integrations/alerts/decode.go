package alerts

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"maps"
	"slices"
	"strings"
)

// DecodeAlertmanager decodes a Prometheus Alertmanager webhook payload
// (version 4, the only version Alertmanager has sent). Each entry of alerts
// becomes one Alert. The version field is not checked, and fields the
// decoder does not know, such as notification_reason and routeLabels of
// v0.35, are ignored. An alert without a status takes the payload's status.
func DecodeAlertmanager(body []byte) ([]Alert, error) {
	return decodeAlertmanagerShape(body, SourceAlertmanager)
}

// DecodeGrafana decodes a Grafana Alerting webhook contact point payload:
// Alertmanager's shape plus fields of Grafana's own (orgId, title, state,
// message, and per alert silenceURL, dashboardURL, panelURL, values), of
// which only the URLs are used (Links). The payload-level title and message describe
// the whole group and are ignored: each alert's title is its own
// annotations.summary or labels.alertname, as for Alertmanager.
func DecodeGrafana(body []byte) ([]Alert, error) {
	return decodeAlertmanagerShape(body, SourceGrafana)
}

func decodeAlertmanagerShape(body []byte, source string) ([]Alert, error) {
	if out, ok := fastAlertmanagerShape(body, source); ok {
		return out, nil
	}
	return carefulAlertmanagerShape(body, source)
}

// carefulAlertmanagerShape decodes level by level, so that an error names its
// exact path (see json.go).
func carefulAlertmanagerShape(body []byte, source string) ([]Alert, error) {
	root, err := parseJSON(body)
	if err != nil {
		return nil, err
	}
	p, err := fields(root, "")
	if err != nil {
		return nil, err
	}
	var groupStatus Status
	if s, err := str(p["status"], "", "status"); err != nil {
		return nil, err
	} else if s != "" {
		if groupStatus, err = parseStatus(s, "", "status"); err != nil {
			return nil, err
		}
	}
	if absent(p["alerts"]) {
		return nil, &DecodeError{Reason: "missing alerts"}
	}
	list, err := alertList(p["alerts"], "alerts")
	if err != nil {
		return nil, err
	}
	out := make([]Alert, 0, len(list))
	for i, raw := range list {
		a, err := decodeAlertmanagerAlert(raw, index("alerts", i), source, groupStatus)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func decodeAlertmanagerAlert(raw json.RawMessage, path, source string, groupStatus Status) (Alert, error) {
	a := Alert{Source: source}
	in, err := fields(raw, path)
	if err != nil {
		return a, err
	}
	s, err := str(in["status"], path, "status")
	if err != nil {
		return a, err
	}
	switch {
	case s != "":
		if a.Status, err = parseStatus(s, path, "status"); err != nil {
			return a, err
		}
	case groupStatus != "":
		a.Status = groupStatus
	default:
		return a, decodeErrorf("%s: missing status", path)
	}
	if a.Labels, err = stringMap(in["labels"], path, "labels"); err != nil {
		return a, err
	}
	if a.Annotations, err = stringMap(in["annotations"], path, "annotations"); err != nil {
		return a, err
	}
	a.Title = strings.TrimSpace(a.Annotations["summary"])
	if a.Title == "" {
		a.Title = strings.TrimSpace(a.Labels["alertname"])
	}
	if a.Title == "" {
		return a, decodeErrorf("%s: missing labels.alertname (and annotations.summary)", path)
	}
	if a.StartsAt, err = timestamp(in["startsAt"], path, "startsAt"); err != nil {
		return a, err
	}
	if a.EndsAt, err = timestamp(in["endsAt"], path, "endsAt"); err != nil {
		return a, err
	}
	for _, key := range urlKeys(source) {
		s, err := str(in[key], path, key)
		if err != nil {
			return a, err
		}
		setLink(&a.Links, key, s)
	}
	a.Links.Runbook = a.Annotations["runbook_url"]
	a.URL = primaryURL(a.Links)
	if a.Fingerprint, err = str(in["fingerprint"], path, "fingerprint"); err != nil {
		return a, err
	}
	if a.Fingerprint == "" {
		// Alertmanager identifies an alert by its label set; the summary
		// often carries a changing value ("lag 1234") and is left out.
		a.Fingerprint = labelsFingerprint(a.Labels, "", false)
	}
	a.Severity = severityFrom(a.Labels, a.Annotations)
	return a, nil
}

// DecodeGeneric decodes the payload of a sender that speaks neither
// Alertmanager nor Grafana: one alert object, or an array of them.
//
//	{"source": "nightly-export", "title": "export late", "severity": "high",
//	 "status": "firing", "labels": {}, "annotations": {}, "dedup_key": "export",
//	 "url": "https://runbook.example/export"}
//
// Only title is required. status is firing or resolved (default firing).
// severity is a string ParseSeverity understands or a number 1 to 5; when it
// is absent or not understood, labels and annotations are consulted as for
// the other senders. source, when given, is copied into the label source
// unless the labels already have one, so routes can match on it; the title
// is copied into the label alertname unless the labels already have one, so
// that group_by [alertname] tells generic alerts apart (senders whose titles
// carry changing values should send a dedup_key or an alertname label).
// url (Links.Generator) is optional; an annotation runbook_url is the
// runbook (Links.Runbook). Unknown fields are ignored.
func DecodeGeneric(body []byte) ([]Alert, error) {
	root, err := parseJSON(body)
	if err != nil {
		return nil, err
	}
	switch root[0] {
	case '{':
		a, err := decodeGenericAlert(root, "")
		if err != nil {
			return nil, err
		}
		return []Alert{a}, nil
	case '[':
		list, err := alertList(root, "")
		if err != nil {
			return nil, err
		}
		out := make([]Alert, 0, len(list))
		for i, raw := range list {
			a, err := decodeGenericAlert(raw, index("", i))
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
		return out, nil
	default:
		return nil, expected("", "an object or an array of objects", root)
	}
}

func decodeGenericAlert(raw json.RawMessage, path string) (Alert, error) {
	a := Alert{Source: SourceGeneric, Status: StatusFiring}
	in, err := fields(raw, path)
	if err != nil {
		return a, err
	}
	title, err := str(in["title"], path, "title")
	if err != nil {
		return a, err
	}
	if a.Title = strings.TrimSpace(title); a.Title == "" {
		if path == "" {
			return a, &DecodeError{Reason: "missing title"}
		}
		return a, decodeErrorf("%s: missing title", path)
	}
	if s, err := str(in["status"], path, "status"); err != nil {
		return a, err
	} else if s != "" {
		if a.Status, err = parseStatus(s, path, "status"); err != nil {
			return a, err
		}
	}
	source, err := str(in["source"], path, "source")
	if err != nil {
		return a, err
	}
	if a.Labels, err = stringMap(in["labels"], path, "labels"); err != nil {
		return a, err
	}
	if a.Annotations, err = stringMap(in["annotations"], path, "annotations"); err != nil {
		return a, err
	}
	dedupKey, err := str(in["dedup_key"], path, "dedup_key")
	if err != nil {
		return a, err
	}
	a.DedupKey = strings.TrimSpace(dedupKey)
	if a.URL, err = str(in["url"], path, "url"); err != nil {
		return a, err
	}
	a.Links = Links{Generator: a.URL, Runbook: a.Annotations["runbook_url"]}
	if a.Severity, err = genericSeverity(in["severity"], path, "severity"); err != nil {
		return a, err
	}

	if _, ok := a.Labels["source"]; !ok {
		if source = strings.TrimSpace(source); source != "" {
			a.Labels["source"] = source
		}
	}
	if _, ok := a.Labels["alertname"]; !ok {
		a.Labels["alertname"] = a.Title
	}
	if a.Severity == SeverityUnknown {
		a.Severity = severityFrom(a.Labels, a.Annotations)
	}
	if a.DedupKey != "" {
		h := sha256.New()
		h.Write([]byte("dedup_key\x00"))
		h.Write([]byte(a.DedupKey))
		a.Fingerprint = hex.EncodeToString(h.Sum(nil))
	} else {
		a.Fingerprint = labelsFingerprint(a.Labels, a.Title, true)
	}
	return a, nil
}

// genericSeverity reads the generic payload's severity: a string or a
// number. A value it does not understand is unknown, not an error.
func genericSeverity(raw json.RawMessage, path, key string) (Severity, error) {
	if absent(raw) {
		return SeverityUnknown, nil
	}
	switch typeName(raw) {
	case "a string":
		s, err := str(raw, path, key)
		if err != nil {
			return SeverityUnknown, err
		}
		sev, _ := ParseSeverity(s)
		return sev, nil
	case "a number":
		sev, _ := severityFromNumber(json.Number(raw))
		return sev, nil
	default:
		return SeverityUnknown, expected(at(path, key), "a string or a number", raw)
	}
}

// parseStatus accepts firing and resolved, trimmed and in any case.
func parseStatus(s, path, key string) (Status, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "firing":
		return StatusFiring, nil
	case "resolved":
		return StatusResolved, nil
	}
	return "", decodeErrorf("%s: unknown status %s (want firing or resolved)", at(path, key), quoteExcerpt(s))
}

// labelsFingerprint is the hex SHA-256 of the sorted labels, and of the title
// when withTitle is set. The label count and every string are length-prefixed,
// so no two different inputs hash the same bytes.
func labelsFingerprint(labels map[string]string, title string, withTitle bool) string {
	h := sha256.New()
	h.Write([]byte("labels\x00"))
	writeUvarint(h, uint64(len(labels)))
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		writeField(h, name)
		writeField(h, labels[name])
	}
	if withTitle {
		writeField(h, title)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeField(h hash.Hash, s string) {
	writeUvarint(h, uint64(len(s)))
	h.Write([]byte(s))
}

func writeUvarint(h hash.Hash, n uint64) {
	var buf [binary.MaxVarintLen64]byte
	h.Write(buf[:binary.PutUvarint(buf[:], n)])
}
