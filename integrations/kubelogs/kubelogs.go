// Package kubelogs reads a Spark driver pod's log through the Kubernetes API
// (pipelines[].logs.kubernetes), for the driverlog scanner: the pods a label selector
// matches in a namespace are listed, the driver pod is chosen, and its container's log is
// streamed, with the previous run's log first when the container restarted.
//
// Two API calls, which the Role in deploy/kubernetes/rbac.yaml allows and nothing more:
// list pods (GET /api/v1/namespaces/{ns}/pods?labelSelector=…) and get pods/log
// (GET /api/v1/namespaces/{ns}/pods/{name}/log?container=…&previous=…&tailLines=…).
package kubelogs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
)

// SparkDriverContainer is the name Spark on Kubernetes gives the driver pod's container; it is
// read when logs.kubernetes.container is empty and the pod has more than one container.
const SparkDriverContainer = "spark-kubernetes-driver"

// RBACFile is where the Role that grants what Pod needs is kept.
const RBACFile = "deploy/kubernetes/rbac.yaml"

// minLineBytes is the average line length tailLines is computed with: maxBytes/minLineBytes
// lines hold at least maxBytes unless the lines are shorter than Spark's timestamp.
const minLineBytes = 16

// Target is pipelines[].logs.kubernetes.
type Target struct {
	Namespace string
	Selector  string // a label selector: spark-role=driver,spark-app-name=sms-replies
	Container string // "": the pod's only container, or spark-kubernetes-driver
}

// Pod is the driver pod's log as a driverlog.Source.
type Pod struct {
	Target
	// Client talks to the API server; nil connects on each read with Connect(Getenv).
	Client *rest.RESTClient
	Getenv func(string) string
}

var _ driverlog.Source = (*Pod)(nil)

// scheme knows core/v1 and nothing else; corev1.AddToScheme also registers metav1's
// ListOptions and Status in v1. client-go's clientset (k8s.io/client-go/kubernetes) and its
// scheme link every API group's types, which is most of the binary's size, for two core/v1
// calls; a REST client over this scheme makes the same requests.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

var parameterCodec = runtime.NewParameterCodec(scheme)

// NewClient is a REST client for core/v1 (APIPath /api) from cfg.
func NewClient(cfg *rest.Config) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}

// Connect builds a client from the in-cluster configuration (the pod's service account), or
// else from KUBECONFIG (a list of files, as kubectl reads it; unset: ~/.kube/config).
func Connect(getenv func(string) string) (*rest.RESTClient, error) {
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(getenv(clientcmd.RecommendedConfigPathEnvVar))}
		if len(rules.Precedence) == 0 {
			rules.Precedence = []string{clientcmd.RecommendedHomeFile}
		}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: not in a cluster, and KUBECONFIG: %w", err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes: in-cluster configuration: %w", err)
	}
	cfg.UserAgent = "streamwatch"
	return NewClient(cfg)
}

// Logs lists the pods the selector matches and offers the chosen pod's container log, after
// its previous run's log when the container restarted. No matching pod is an error that says
// so; so is a refusal of the API, naming the RBAC verb the Role lacks.
func (p *Pod) Logs(ctx context.Context) ([]driverlog.Log, error) {
	c := p.Client
	if c == nil {
		var err error
		if c, err = Connect(p.Getenv); err != nil {
			return nil, err
		}
	}
	list := &corev1.PodList{}
	err := c.Get().Namespace(p.Namespace).Resource("pods").
		VersionedParams(&metav1.ListOptions{LabelSelector: p.Selector}, parameterCodec).
		Do(ctx).Into(list)
	if err != nil {
		return nil, explain(err, "list", "pods", p.Namespace)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no pod matches selector %q in namespace %s (logs.kubernetes)", p.Selector, p.Namespace)
	}
	pod, why := choose(list.Items, p.Selector)
	container, err := p.container(pod)
	if err != nil {
		return nil, err
	}
	// The log's name, as reports show it and stored observations keep it (beat_log).
	name := fmt.Sprintf("pod %s/%s container %s", pod.Namespace, pod.Name, container)
	var logs []driverlog.Log
	status := containerStatus(pod, container)
	if status != nil && status.RestartCount > 0 {
		note := &driverlog.PodNote{Choice: driverlog.PodPrevious, Restarts: status.RestartCount}
		l := driverlog.Log{Name: name + ", previous run", Pod: note, Open: p.open(c, pod.Name, container, true)}
		if t := status.LastTerminationState.Terminated; t != nil {
			l.ModTime = t.FinishedAt.Time
			note.Ended, note.ExitCode, note.Reason = true, t.ExitCode, t.Reason
		}
		logs = append(logs, l)
	}
	l := driverlog.Log{Name: name, Pod: why, Open: p.open(c, pod.Name, container, false)}
	if status != nil && status.State.Terminated != nil {
		l.ModTime = status.State.Terminated.FinishedAt.Time
	}
	return append(logs, l), nil
}

// choose picks the driver pod: the newest running one, else the newest of any phase (a
// driver that failed has stopped running, and its log is the one to read).
func choose(pods []corev1.Pod, selector string) (corev1.Pod, *driverlog.PodNote) {
	started := func(p corev1.Pod) time.Time {
		if p.Status.StartTime != nil {
			return p.Status.StartTime.Time
		}
		return p.CreationTimestamp.Time
	}
	newestFirst := func(a, b corev1.Pod) int {
		return cmp.Or(started(b).Compare(started(a)), cmp.Compare(a.Name, b.Name))
	}
	var running []corev1.Pod
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning {
			running = append(running, p)
		}
	}
	note := &driverlog.PodNote{Choice: driverlog.PodRunning, Selector: selector, Pods: len(pods)}
	if len(running) > 0 {
		slices.SortFunc(running, newestFirst)
		return running[0], note
	}
	pods = slices.Clone(pods)
	slices.SortFunc(pods, newestFirst)
	note.Choice, note.Phase = driverlog.PodNoneRunning, string(pods[0].Status.Phase)
	return pods[0], note
}

// container is the container to read: the configured one, else the pod's only one, else
// Spark's driver container.
func (p *Pod) container(pod corev1.Pod) (string, error) {
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	switch {
	case p.Container != "" && slices.Contains(names, p.Container):
		return p.Container, nil
	case p.Container != "":
		return "", fmt.Errorf("pod %s/%s has no container %q (logs.kubernetes.container); it has %s", pod.Namespace, pod.Name, p.Container, strings.Join(names, ", "))
	case len(names) == 1:
		return names[0], nil
	case slices.Contains(names, SparkDriverContainer):
		return SparkDriverContainer, nil
	}
	return "", fmt.Errorf("pod %s/%s has containers %s: set logs.kubernetes.container", pod.Namespace, pod.Name, strings.Join(names, ", "))
}

func containerStatus(pod corev1.Pod, name string) *corev1.ContainerStatus {
	for i, s := range pod.Status.ContainerStatuses {
		if s.Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// open streams the container's log. limitBytes would keep the log's first bytes, the oldest,
// so the tail is asked for by lines (tailLines, enough lines for maxBytes unless they are
// shorter than minLineBytes on average) and the scanner keeps the newest maxBytes of them.
func (p *Pod) open(c *rest.RESTClient, pod, container string, previous bool) func(context.Context, int64) (io.ReadCloser, error) {
	return func(ctx context.Context, maxBytes int64) (io.ReadCloser, error) {
		lines := max(1, maxBytes/minLineBytes)
		rc, err := c.Get().Namespace(p.Namespace).Resource("pods").Name(pod).SubResource("log").
			VersionedParams(&corev1.PodLogOptions{Container: container, Previous: previous, TailLines: &lines}, parameterCodec).
			Stream(ctx)
		if err != nil {
			return nil, explain(err, "get", "pods/log", p.Namespace)
		}
		return rc, nil
	}
}

// explain wraps an API error; a refusal names the RBAC verb and resource the Role lacks.
func explain(err error, verb, resource, namespace string) error {
	what := fmt.Sprintf("%s %s in namespace %s", verb, resource, namespace)
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: forbidden: streamwatch's service account needs the RBAC verb %q on %q in namespace %s (the Role in %s): %w",
			what, verb, resource, namespace, RBACFile, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: unauthorized: the API server refused streamwatch's credentials (the service account token or KUBECONFIG): %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
