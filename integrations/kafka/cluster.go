package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// Clusters holds one lazily connected client per configured cluster.
type Clusters struct {
	byName map[string]*Cluster
	names  []string
}

// ClustersOptions are the process-wide inputs of NewClusters.
type ClustersOptions struct {
	Getenv func(string) string // reads SASL passwords; nil means os.Getenv
	Logger *slog.Logger        // nil means slog.Default()
}

// NewClusters validates every cluster's options and prepares its client. It
// connects to nothing: each client connects on first use, and a cluster
// that is down is retried on the next use, so it never stops the bot from
// starting.
func NewClusters(clusters []ClusterOptions, opts ClustersOptions) (*Clusters, error) {
	cs := &Clusters{byName: make(map[string]*Cluster, len(clusters))}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	for _, o := range clusters {
		if _, dup := cs.byName[o.Name]; dup {
			return nil, fmt.Errorf("cluster %s is configured twice", o.Name)
		}
		cfg, err := o.saramaConfig(opts.Getenv)
		if err != nil {
			return nil, err
		}
		cs.byName[o.Name] = &Cluster{opts: o, cfg: cfg, logger: logger.With("cluster", o.Name)}
		cs.names = append(cs.names, o.Name)
	}
	sort.Strings(cs.names)
	return cs, nil
}

// Names lists the configured clusters, sorted.
func (cs *Clusters) Names() []string { return slices.Clone(cs.names) }

// Cluster returns the named cluster, or an error wrapping ErrUnknownCluster.
func (cs *Clusters) Cluster(name string) (*Cluster, error) {
	c, ok := cs.byName[name]
	if !ok {
		return nil, &notFoundError{msg: fmt.Sprintf("kafka cluster %q is not configured (configured: %s)", name, strings.Join(cs.names, ", ")),
			kind: ErrUnknownCluster}
	}
	return c, nil
}

// Offsets fetches a group's offsets on topics in the named cluster (Cluster.Offsets).
func (cs *Clusters) Offsets(ctx context.Context, cluster, group string, topics ...string) (*Offsets, error) {
	c, err := cs.Cluster(cluster)
	if err != nil {
		return nil, err
	}
	return c.Offsets(ctx, group, topics...)
}

// Close closes every client that was connected.
func (cs *Clusters) Close() error {
	var errs []error
	for _, name := range cs.names {
		errs = append(errs, cs.byName[name].Close())
	}
	return errors.Join(errs...)
}

// Cluster is one configured cluster. Its sarama client is created on first
// use and reused; sarama reconnects brokers by itself.
type Cluster struct {
	opts   ClusterOptions
	cfg    *sarama.Config
	logger *slog.Logger

	mu     sync.Mutex
	client sarama.Client
	closed bool
}

// Name is the cluster's configured name.
func (c *Cluster) Name() string { return c.opts.Name }

// Close closes the cluster's client, if it was created.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.client == nil {
		return nil
	}
	err := c.client.Close()
	c.client = nil
	return err
}

// saramaClient returns the cluster's client, creating it if needed. With
// Metadata.Full off, creating the client dials nothing; brokers are dialled
// by the first request, and errors surface there.
func (c *Cluster) saramaClient() (sarama.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("cluster %s: %w", c.opts.Name, sarama.ErrClosedClient)
	}
	if c.client != nil && !c.client.Closed() {
		return c.client, nil
	}
	cl, err := sarama.NewClient(c.opts.Brokers, c.cfg)
	if err != nil {
		return nil, c.clusterError(err, 0)
	}
	c.client = cl
	return cl, nil
}

func (c *Cluster) clusterError(err error, waited time.Duration) error {
	return &ClusterError{Cluster: c.opts.Name, Brokers: c.opts.Brokers, Timeout: c.opts.timeout(), Waited: waited,
		SASLMechanism: c.opts.SASL.Mechanism, SASLUser: c.opts.SASL.Username, Err: err}
}

func (c *Cluster) brokerError(b *sarama.Broker, op string, started time.Time, err error) *BrokerError {
	return &BrokerError{Cluster: c.opts.Name, Broker: brokerOf(b), Op: op, Waited: time.Since(started), Err: err}
}

// result carries a value computed by a goroutine that the caller may have
// stopped waiting for.
type result[T any] struct {
	v   T
	err error
}

// await runs f on its own goroutine and waits for it or for ctx, whichever
// comes first. sarama takes no contexts; its own network timeouts (the
// cluster's Timeout) end an abandoned f soon after.
func await[T any](ctx context.Context, f func() (T, error)) (T, error) {
	ch := make(chan result[T], 1)
	go func() {
		v, err := f()
		ch <- result[T]{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// topicLeaders resolves the partitions of topics and their leaders, loading
// metadata for topics the client has not seen. An unknown topic is an error
// wrapping ErrUnknownTopic.
func (c *Cluster) topicLeaders(ctx context.Context, cl sarama.Client, topics []string) ([]partitionRef, error) {
	started := time.Now()
	var unknown string // written by the goroutine, read only after it returned
	refs, err := await(ctx, func() ([]partitionRef, error) {
		var refs []partitionRef
		for _, topic := range topics {
			parts, err := cl.Partitions(topic)
			if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				// The cache may predate the topic's creation.
				if rerr := cl.RefreshMetadata(topic); rerr == nil {
					parts, err = cl.Partitions(topic)
				}
			}
			if err != nil {
				unknown = topic
				return nil, err
			}
			slices.Sort(parts)
			for _, p := range parts {
				ref := partitionRef{topic: topic, partition: p}
				if b, err := cl.Leader(topic, p); err == nil {
					ref.leader = b
				}
				refs = append(refs, ref)
			}
		}
		return refs, nil
	})
	switch {
	case err == nil:
		return refs, nil
	case errors.Is(err, sarama.ErrUnknownTopicOrPartition), errors.Is(err, sarama.ErrInvalidTopic):
		return nil, &notFoundError{msg: fmt.Sprintf("topic %q does not exist on cluster %s", unknown, c.opts.Name), kind: ErrUnknownTopic}
	default:
		return nil, c.clusterError(err, time.Since(started))
	}
}

// partitionRef is a partition with the broker that leads it (nil when the
// partition has no leader right now).
type partitionRef struct {
	topic     string
	partition int32
	leader    *sarama.Broker
}
