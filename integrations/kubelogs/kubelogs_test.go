package kubelogs

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const (
	ns       = "spark"
	selector = "spark-role=driver,spark-app-name=sms-replies"
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// driverPod is a Spark driver pod as spark-submit creates it: Spark's labels, the driver
// container beside a sidecar, started at start.
func driverPod(name string, phase corev1.PodPhase, start time.Time, restarts int32) corev1.Pod {
	p := corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(start.Add(-5 * time.Second)),
			Labels: map[string]string{"spark-role": "driver", "spark-app-name": "sms-replies", "spark-app-selector": "spark-" + name},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: SparkDriverContainer, Image: "apache/spark:3.5.1"},
			{Name: "istio-proxy", Image: "istio/proxyv2:1.24.0"},
		}},
		Status: corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: start}, ContainerStatuses: []corev1.ContainerStatus{
			{Name: SparkDriverContainer, RestartCount: restarts, Ready: phase == corev1.PodRunning},
			{Name: "istio-proxy", Ready: phase == corev1.PodRunning},
		}},
	}
	if restarts > 0 {
		p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(start.Add(3 * time.Minute)),
		}
	}
	return p
}

// sparkCluster is a namespace with the sms-replies driver pod, restarted once after the
// failure its previous log holds, beside an older failed driver and an executor.
func sparkCluster(t *testing.T) *apiServer {
	s := newAPIServer(t)
	old := driverPod("sms-replies-0a1b-driver", corev1.PodFailed, testNow.Add(-26*time.Hour), 0)
	s.addPod(old)
	s.setLog(ns, old.Name, SparkDriverContainer, false, readTestdata(t, "driver-clean.log"))
	cur := driverPod("sms-replies-7f3c-driver", corev1.PodRunning, testNow.Add(-3*time.Hour), 1)
	s.addPod(cur)
	s.setLog(ns, cur.Name, SparkDriverContainer, true, readTestdata(t, "driver-permission.log"))
	s.setLog(ns, cur.Name, SparkDriverContainer, false, readTestdata(t, "driver-state.log"))
	exec := driverPod("sms-replies-7f3c-exec-1", corev1.PodRunning, testNow.Add(-time.Hour), 0)
	exec.Labels["spark-role"] = "executor"
	s.addPod(exec)
	s.bindRole(filepath.Join("..", "..", RBACFile))
	return s
}

func scanOptions(maxBytes int64, paths []string, sources ...driverlog.Source) driverlog.Options {
	return driverlog.Options{Paths: paths, Sources: sources, MaxBytes: maxBytes, Location: time.UTC, Now: func() time.Time { return testNow }}
}

// TestPodLogsFindingsAsFromFiles: the driver pod's log, read through client-go from an API
// server, gives the same findings (signatures, counts, first and last times, redacted
// examples) as the same lines in local files: the restarted container's previous run, where
// the failure is, and its current run; within max_bytes from the end of each.
func TestPodLogsFindingsAsFromFiles(t *testing.T) {
	t.Parallel()
	api := sparkCluster(t)
	local := t.TempDir()
	files := []struct{ name, text string }{
		{"previous.log", readTestdata(t, "driver-permission.log")},
		{"current.log", readTestdata(t, "driver-state.log")},
	}
	for i, f := range files {
		path := filepath.Join(local, f.name)
		if err := os.WriteFile(path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
		mod := testNow.Add(time.Duration(i-10) * time.Minute)
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	pod := &Pod{Target: Target{Namespace: ns, Selector: selector, Container: SparkDriverContainer}, Client: api.client()}

	for _, maxBytes := range []int64{driverlog.DefaultMaxBytes, 3000} { // 3000: only each log's tail
		want, err := driverlog.Scan(t.Context(), scanOptions(maxBytes, []string{filepath.Join(local, "previous.log"), filepath.Join(local, "current.log")}))
		if err != nil || len(want.Matches) < 2 || len(want.Errors) > 0 {
			t.Fatalf("local scan: %+v, %v", want, err)
		}
		got, err := driverlog.Scan(t.Context(), scanOptions(maxBytes, nil, pod))
		if err != nil || len(got.Errors) > 0 {
			t.Fatalf("pod scan (max %d): %v, errors %q", maxBytes, err, got.Errors)
		}
		prev := "pod spark/sms-replies-7f3c-driver container spark-kubernetes-driver, previous run"
		cur := "pod spark/sms-replies-7f3c-driver container spark-kubernetes-driver"
		if len(got.Files) != 2 || got.Files[0].Path != prev || got.Files[1].Path != cur {
			t.Fatalf("pod scan read %+v, want the previous run, then the current one", got.Files)
		}
		if n := got.Files[0].Pod; n == nil || *n != (driverlog.PodNote{Choice: driverlog.PodPrevious, Restarts: 1, Ended: true, ExitCode: 1, Reason: "Error"}) ||
			!got.Files[0].ModTime.Equal(testNow.Add(-3*time.Hour+3*time.Minute)) {
			t.Errorf("previous run: %+v (%+v), want the restart, its exit code and when it ended", got.Files[0], n)
		}
		if n, want := got.Files[1].Pod, (driverlog.PodNote{Choice: driverlog.PodRunning, Selector: selector, Pods: 2}); n == nil || *n != want {
			t.Errorf("current run: %+v, want %+v", n, want)
		}
		for i, f := range got.Files {
			if w := want.Files[i]; f.BytesRead != w.BytesRead || f.Truncated != w.Truncated {
				t.Errorf("pod scan (max %d) read %+v, local %+v", maxBytes, f, w)
			}
		}
		if len(got.Matches) != len(want.Matches) {
			t.Fatalf("pod scan (max %d): %d matches, local %d", maxBytes, len(got.Matches), len(want.Matches))
		}
		for i, m := range got.Matches {
			w := want.Matches[i]
			from := map[string]string{prev: "previous.log", cur: "current.log"}[m.File]
			if m.Signature.ID != w.Signature.ID || m.Count != w.Count || !m.First.Equal(w.First) || !m.Last.Equal(w.Last) ||
				m.Example != w.Example || from != filepath.Base(w.File) {
				t.Errorf("pod scan (max %d) match %d = %+v, local %+v", maxBytes, i, m, w)
			}
		}
		if i := slices.IndexFunc(got.Matches, func(m driverlog.Match) bool { return m.Signature.ID == "PERMISSION_DENIED" }); i < 0 || got.Matches[i].File != prev {
			t.Errorf("findings %+v: want PERMISSION_DENIED from the previous run", got.Matches)
		}
	}

	// The tail is asked for by lines: limitBytes would keep the log's first bytes.
	var logs int
	for _, r := range api.seen() {
		if strings.Contains(r, "/log?") {
			logs++
			if !strings.Contains(r, "container=spark-kubernetes-driver") || !strings.Contains(r, "tailLines=") || strings.Contains(r, "limitBytes") {
				t.Errorf("log request %s: want container and tailLines, no limitBytes", r)
			}
		}
	}
	if logs != 4 {
		t.Errorf("%d log requests, want 4 (previous and current, twice): %q", logs, api.seen())
	}
}

// TestPodNoMatch: a selector no pod matches is a clear line in the report, not a silent
// empty scan, and not a failed one.
func TestPodNoMatch(t *testing.T) {
	t.Parallel()
	api := sparkCluster(t)
	for _, tc := range []struct{ namespace, selector string }{
		{ns, "spark-role=driver,spark-app-name=sms-replys"},
		{"default", selector},
	} {
		pod := &Pod{Target: Target{Namespace: tc.namespace, Selector: tc.selector}, Client: api.client()}
		r, err := driverlog.Scan(t.Context(), scanOptions(0, nil, pod))
		want := `no pod matches selector "` + tc.selector + `" in namespace ` + tc.namespace + " (logs.kubernetes)"
		if err != nil || len(r.Files) != 0 || len(r.Errors) != 1 || r.Errors[0] != want {
			t.Errorf("scan %s in %s: files %+v, errors %q, %v; want %q", tc.selector, tc.namespace, r.Files, r.Errors, err, want)
		}
	}
}

// TestPodForbidden: when the service account's Role lacks a verb, the report names it, the
// resource and where the Role is, whichever of the two calls is refused.
func TestPodForbidden(t *testing.T) {
	t.Parallel()
	for _, denied := range []string{"list pods", "get pods/log"} {
		api := sparkCluster(t)
		api.deny(denied)
		pod := &Pod{Target: Target{Namespace: ns, Selector: selector}, Client: api.client()}
		r, err := driverlog.Scan(t.Context(), scanOptions(0, nil, pod))
		verb, resource, _ := strings.Cut(denied, " ")
		want := `forbidden: streamwatch's service account needs the RBAC verb "` + verb + `" on "` + resource + `" in namespace spark (the Role in deploy/kubernetes/rbac.yaml)`
		if err != nil || len(r.Errors) == 0 || !strings.Contains(r.Errors[0], want) || len(r.Matches) != 0 {
			t.Errorf("denied %s: errors %q, %v; want %q", denied, r.Errors, err, want)
		}
	}
}

// TestRole: the Role in deploy/kubernetes/rbac.yaml grants what Pod uses (sparkCluster's
// server refuses anything else) and nothing wider.
func TestRole(t *testing.T) {
	t.Parallel()
	role := newAPIServer(t).bindRole(filepath.Join("..", "..", RBACFile))
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
	}
	if !reflect.DeepEqual(role.Rules, want) {
		t.Errorf("%s grants %+v, want exactly %+v", RBACFile, role.Rules, want)
	}
}

// TestPodChoice: which pod and container are read, and why, when the configuration leaves
// the container out or names one the pod lacks, and when no driver is running.
func TestPodChoice(t *testing.T) {
	t.Parallel()
	api := newAPIServer(t)
	failed := driverPod("sms-replies-9e2d-driver", corev1.PodFailed, testNow.Add(-time.Hour), 0)
	failed.Status.ContainerStatuses[0].State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(testNow.Add(-10 * time.Minute))}
	api.addPod(failed)
	api.setLog(ns, failed.Name, SparkDriverContainer, false, readTestdata(t, "driver-permission.log"))
	older := driverPod("sms-replies-1c1c-driver", corev1.PodSucceeded, testNow.Add(-48*time.Hour), 0)
	api.addPod(older)

	pod := &Pod{Target: Target{Namespace: ns, Selector: selector}, Client: api.client()}
	logs, err := pod.Logs(t.Context())
	if err != nil || len(logs) != 1 {
		t.Fatalf("Logs = %+v, %v", logs, err)
	}
	l := logs[0]
	if l.Name != "pod spark/sms-replies-9e2d-driver container spark-kubernetes-driver" ||
		l.Pod == nil || *l.Pod != (driverlog.PodNote{Choice: driverlog.PodNoneRunning, Selector: selector, Pods: 2, Phase: "Failed"}) ||
		!l.ModTime.Equal(testNow.Add(-10*time.Minute)) {
		t.Errorf("chose %+v (%+v), want the failed driver's spark-kubernetes-driver container, ended 10 minutes ago", l, l.Pod)
	}
	r, err := driverlog.Scan(t.Context(), scanOptions(0, nil, pod))
	if err != nil || len(r.Matches) == 0 || r.Matches[0].Signature.ID != "PERMISSION_DENIED" {
		t.Errorf("scan of the failed driver: %+v, %v", r, err)
	}

	pod.Container = "driver"
	if _, err := pod.Logs(t.Context()); err == nil || !strings.Contains(err.Error(), `has no container "driver" (logs.kubernetes.container); it has spark-kubernetes-driver, istio-proxy`) {
		t.Errorf("unknown container: %v", err)
	}
}

// TestPodHeartbeats: Spark's progress and idle lines in the driver pod's log are the query's
// heartbeats, as in a file.
func TestPodHeartbeats(t *testing.T) {
	t.Parallel()
	api := newAPIServer(t)
	p := driverPod("sms-replies-5d5d-driver", corev1.PodRunning, testNow.Add(-time.Hour), 0)
	api.addPod(p)
	api.setLog(ns, p.Name, SparkDriverContainer, false, readTestdata(t, "driver-clean.log"))
	want, err := driverlog.LastBeats([]string{filepath.Join("testdata", "driver-clean.log")}, 0, time.UTC)
	if err != nil || len(want) == 0 {
		t.Fatalf("LastBeats of the file = %+v, %v", want, err)
	}
	pod := &Pod{Target: Target{Namespace: ns, Selector: selector}, Client: api.client()}
	got, err := driverlog.LastBeatsIn(t.Context(), nil, 0, time.UTC, nil, pod)
	if err != nil || len(got) != len(want) {
		t.Fatalf("LastBeatsIn(pod) = %+v, %v; file %+v", got, err, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Query != w.Query || g.Run != w.Run || !g.At.Equal(w.At) || g.Idle != w.Idle || g.Line != w.Line {
			t.Errorf("beat %d = %+v, file %+v", i, g, w)
		}
		// What a file cannot say, a pod can: whether the driver still runs.
		if g.Pod == nil || g.Pod.Choice != driverlog.PodRunning {
			t.Errorf("beat %d's pod %+v does not say the driver pod runs", i, g.Pod)
		}
	}
}

// TestConnectKubeconfig: outside a cluster the client comes from the files KUBECONFIG names.
func TestConnectKubeconfig(t *testing.T) {
	t.Parallel()
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		t.Skip("running in a cluster: the in-cluster configuration wins")
	}
	api := sparkCluster(t)
	kubeconfig := filepath.Join(t.TempDir(), "config")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "` + api.URL + `"}
users:
- name: streamwatch
  user: {token: not-a-secret}
contexts:
- name: test
  context: {cluster: test, user: streamwatch, namespace: spark}
current-context: test
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KUBECONFIG": filepath.Join(t.TempDir(), "missing") + string(filepath.ListSeparator) + kubeconfig}
	pod := &Pod{Target: Target{Namespace: ns, Selector: selector}, Getenv: func(k string) string { return env[k] }}
	logs, err := pod.Logs(t.Context())
	if err != nil || len(logs) != 2 {
		t.Fatalf("Logs through KUBECONFIG = %+v, %v", logs, err)
	}

	env["KUBECONFIG"] = filepath.Join(t.TempDir(), "missing")
	if _, err := pod.Logs(t.Context()); err == nil || !strings.Contains(err.Error(), "not in a cluster, and KUBECONFIG") {
		t.Errorf("no configuration: %v", err)
	}
}
