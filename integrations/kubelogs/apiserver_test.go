package kubelogs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// apiServer speaks the two endpoints of the Kubernetes API that Pod uses, as the API
// reference documents them (core/v1 Pod: "list" and "read log"):
//
//	GET /api/v1/namespaces/{namespace}/pods?labelSelector=…          → a PodList (JSON)
//	GET /api/v1/namespaces/{namespace}/pods/{name}/log?container=…&previous=…&tailLines=…&limitBytes=…
//	                                                                 → the log (text/plain)
//
// Errors are metav1.Status objects with the code, as the API server writes them.
type apiServer struct {
	t    testing.TB
	URL  string
	mu   sync.Mutex
	pods []corev1.Pod
	// logs by "namespace/pod/container" and "…/previous"
	logs map[string]string
	// forbidden holds "verb resource" pairs the caller's Role lacks, such as "get pods/log".
	forbidden map[string]bool
	// role, when set, is the Role the caller is bound to: what it does not allow is refused.
	role     *rbacv1.Role
	requests []string // "GET path?query" in order
}

func newAPIServer(t testing.TB) *apiServer {
	s := &apiServer{t: t, logs: map[string]string{}, forbidden: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// client is client-go's real REST client, as Connect builds it, talking to the server.
func (s *apiServer) client() *rest.RESTClient {
	c, err := NewClient(&rest.Config{Host: s.URL})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

func (s *apiServer) addPod(p corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods = append(s.pods, p)
}

func (s *apiServer) setLog(namespace, pod, container string, previous bool, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logs[logKey(namespace, pod, container, previous)] = text
}

func (s *apiServer) deny(verbResource string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forbidden[verbResource] = true
}

func (s *apiServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func logKey(namespace, pod, container string, previous bool) string {
	k := namespace + "/" + pod + "/" + container
	if previous {
		k += "/previous"
	}
	return k
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodGet || len(parts) < 5 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "namespaces" || parts[4] != "pods" {
		status(w, http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource")
		return
	}
	ns := parts[3]
	switch len(parts) {
	case 5:
		s.list(w, r, ns)
	case 7:
		if parts[6] == "log" {
			s.log(w, r, ns, parts[5])
			return
		}
		fallthrough
	default:
		status(w, http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource")
	}
}

// bindRole makes the server authorize requests by the Role in file, as the API server's RBAC
// authorizer does for a service account bound to it (and to nothing else).
func (s *apiServer) bindRole(file string) *rbacv1.Role {
	b, err := os.ReadFile(file)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var role rbacv1.Role
		if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
			s.t.Fatalf("%s: %v", file, err)
		}
		if role.Kind == "Role" {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.role = &role
			return &role
		}
	}
	s.t.Fatalf("%s has no Role", file)
	return nil
}

func (s *apiServer) allowed(verb, resource string) bool {
	if s.forbidden[verb+" "+resource] {
		return false
	}
	if s.role == nil {
		return true
	}
	for _, r := range s.role.Rules {
		if slices.Contains(r.APIGroups, "") && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func (s *apiServer) refuse(w http.ResponseWriter, verb, resource, ns string) bool {
	if s.allowed(verb, resource) {
		return false
	}
	res, sub, _ := strings.Cut(resource, "/")
	msg := fmt.Sprintf(`%s is forbidden: User "system:serviceaccount:streamwatch:streamwatch" cannot %s resource %q in API group "" in the namespace %q`, res, verb, res, ns)
	if sub != "" {
		msg = fmt.Sprintf(`%s is forbidden: User "system:serviceaccount:streamwatch:streamwatch" cannot %s resource %q in API group "" in the namespace %q`, res, verb, resource, ns)
	}
	status(w, http.StatusForbidden, metav1.StatusReasonForbidden, msg)
	return true
}

func (s *apiServer) list(w http.ResponseWriter, r *http.Request, ns string) {
	if s.refuse(w, "list", "pods", ns) {
		return
	}
	sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "unable to parse requirement: "+err.Error())
		return
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: "4711"}}
	for _, p := range s.pods {
		if p.Namespace == ns && sel.Matches(labels.Set(p.Labels)) {
			list.Items = append(list.Items, p)
		}
	}
	if list.Items == nil {
		list.Items = []corev1.Pod{}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}

func (s *apiServer) log(w http.ResponseWriter, r *http.Request, ns, name string) {
	if s.refuse(w, "get", "pods/log", ns) {
		return
	}
	i := slices.IndexFunc(s.pods, func(p corev1.Pod) bool { return p.Namespace == ns && p.Name == name })
	if i < 0 {
		status(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("pods %q not found", name))
		return
	}
	pod := s.pods[i]
	q := r.URL.Query()
	container := q.Get("container")
	if container == "" {
		if len(pod.Spec.Containers) != 1 {
			status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf("a container name must be specified for pod %s", name))
			return
		}
		container = pod.Spec.Containers[0].Name
	}
	previous := q.Get("previous") == "true"
	text, ok := s.logs[logKey(ns, name, container, previous)]
	if !ok {
		msg := fmt.Sprintf("container %q in pod %q is not valid", container, name)
		if previous {
			msg = fmt.Sprintf("previous terminated container %q in pod %q not found", container, name)
		}
		status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, msg)
		return
	}
	// tailLines: "the number of lines from the end of the logs to show";
	// limitBytes: "the number of bytes to read from the server before terminating the log
	// output" — the first bytes of what would be shown.
	if v := q.Get("tailLines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "tailLines: invalid value")
			return
		}
		var lines []string
		sc := bufio.NewScanner(strings.NewReader(text))
		for sc.Scan() {
			lines = append(lines, sc.Text()+"\n")
		}
		text = strings.Join(lines[max(0, len(lines)-n):], "")
	}
	if v := q.Get("limitBytes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "limitBytes: must be greater than 0")
			return
		}
		text = text[:min(n, len(text))]
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprint(w, text)
}

func status(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
}
