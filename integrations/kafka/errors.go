package kafka

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// Sentinel errors; the errors this package returns wrap one of them, so the
// command layer can tell the cases apart with errors.Is.
var (
	ErrUnknownCluster  = errors.New("unknown kafka cluster")
	ErrUnknownPipeline = errors.New("unknown pipeline")
	ErrUnknownTopic    = errors.New("topic does not exist")
	ErrUnknownGroup    = errors.New("consumer group does not exist")
	ErrUnreachable     = errors.New("broker unreachable")
	ErrAuth            = errors.New("authentication failed")
)

// notFoundError is an unknown topic, group, cluster or pipeline, said as a
// sentence, wrapping the matching sentinel.
type notFoundError struct {
	msg  string
	kind error
}

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return e.kind }

// Broker names a broker in answers and errors.
type Broker struct {
	ID   int32 // -1 for a bootstrap address whose ID is not known yet
	Addr string
}

func (b Broker) String() string {
	if b.ID < 0 {
		return b.Addr
	}
	return fmt.Sprintf("broker %d (%s)", b.ID, b.Addr)
}

func brokerOf(b *sarama.Broker) Broker { return Broker{ID: b.ID(), Addr: b.Addr()} }

// BrokerError says which broker failed which request, and after how long.
// It wraps ErrUnreachable when the broker did not answer, ErrAuth when it
// refused the credentials, and the broker's error otherwise.
type BrokerError struct {
	Cluster string
	Broker  Broker
	Op      string        // the request: ListOffsets, OffsetFetch, DescribeGroups, ...
	Waited  time.Duration // how long the request ran before it failed
	Err     error
}

func (e *BrokerError) Error() string { return fmt.Sprintf("cluster %s: %s", e.Cluster, e.detail()) }

// detail is the error without the cluster's name.
func (e *BrokerError) detail() string {
	cause := e.Err.Error()
	if errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, context.Canceled) {
		cause = "no answer within " + roundDuration(e.Waited).String()
	}
	return fmt.Sprintf("%s: %s: %s", e.Broker, e.Op, cause)
}

func (e *BrokerError) Unwrap() []error {
	errs := []error{e.Err}
	switch {
	case isAuthError(e.Err):
		errs = append(errs, ErrAuth)
	case isUnreachable(e.Err):
		errs = append(errs, ErrUnreachable)
	}
	return errs
}

// ClusterError is a failure of the cluster as a whole: no bootstrap broker
// answered, or the cluster refused the credentials.
type ClusterError struct {
	Cluster string
	Brokers []string      // the addresses that were tried
	Timeout time.Duration // the per-request timeout in force
	Waited  time.Duration
	// SASLMechanism and SASLUser are set when the cluster uses SASL.
	SASLMechanism, SASLUser string
	Err                     error
}

// auth says whether the failure is the credentials'. Real brokers answer a
// bad password with SASL_AUTHENTICATION_FAILED; some (kfake among them)
// just close the connection during the SASL exchange, which, with SASL
// configured and every broker doing it, means the same.
func (e *ClusterError) auth() bool {
	return isAuthError(e.Err) || e.SASLMechanism != "" && isClosedConn(e.Err)
}

func (e *ClusterError) Error() string {
	switch {
	case e.auth() && e.SASLMechanism != "":
		cause := conciseError(e.Err)
		if !isAuthError(e.Err) {
			cause = "the brokers closed the connection during the SASL exchange"
		}
		return fmt.Sprintf("cluster %s: authentication as %q (%s) failed: %s", e.Cluster, e.SASLUser, e.SASLMechanism, cause)
	case e.auth():
		return fmt.Sprintf("cluster %s: authentication failed: %s", e.Cluster, conciseError(e.Err))
	case errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, context.Canceled):
		return fmt.Sprintf("cluster %s: no answer from %s within %s", e.Cluster, strings.Join(e.Brokers, ", "), roundDuration(e.Waited))
	default:
		return fmt.Sprintf("cluster %s: no broker of %s answered (timeout %s): %s", e.Cluster, strings.Join(e.Brokers, ", "), e.Timeout, conciseError(e.Err))
	}
}

func (e *ClusterError) Unwrap() []error {
	if e.auth() {
		return []error{e.Err, ErrAuth}
	}
	return []error{e.Err, ErrUnreachable}
}

// Retryable says whether asking again later can help: true for brokers that
// did not answer, false for bad credentials, unknown topics or groups and
// configuration mistakes.
func Retryable(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrAuth), errors.Is(err, ErrUnknownTopic), errors.Is(err, ErrUnknownGroup),
		errors.Is(err, ErrUnknownCluster), errors.Is(err, ErrUnknownPipeline):
		return false
	case errors.Is(err, ErrUnreachable), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		switch kerr {
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable,
			sarama.ErrOffsetsLoadInProgress, sarama.ErrNotLeaderForPartition, sarama.ErrLeaderNotAvailable,
			sarama.ErrRequestTimedOut, sarama.ErrNetworkException:
			return true
		}
	}
	return false
}

func isAuthError(err error) bool {
	if errors.Is(err, sarama.ErrSASLAuthenticationFailed) || errors.Is(err, sarama.ErrUnsupportedSASLMechanism) ||
		errors.Is(err, sarama.ErrIllegalSASLState) {
		return true
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "SASL") || strings.Contains(msg, "scram:") || strings.Contains(msg, "tls: ")
}

func isClosedConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "connection reset by peer")
}

func isUnreachable(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, sarama.ErrOutOfBrokers) || errors.Is(err, sarama.ErrNotConnected) ||
		errors.Is(err, sarama.ErrClosedClient) || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "EOF")
}

// conciseError drops sarama's "kafka: client has run out of available
// brokers" preamble when a more telling cause follows it, and the cluster's
// name from a broker's error.
func conciseError(err error) string {
	var be *BrokerError
	if errors.As(err, &be) {
		return be.detail()
	}
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	if i := strings.Index(msg, "run out of available brokers to talk to: "); i >= 0 {
		return msg[i+len("run out of available brokers to talk to: "):]
	}
	return msg
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}
