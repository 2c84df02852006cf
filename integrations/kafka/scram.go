package kafka

import (
	"errors"
	"fmt"

	"github.com/xdg-go/scram"
)

// scramClient adapts github.com/xdg-go/scram (the library sarama's own examples use) to
// sarama.SCRAMClient. The library does what a hand-written client tends to skip: SASLprep of
// the user name and password (RFC 4013), the minimum iteration count, nonce and signature
// checks.
type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func newSCRAMClient(h scram.HashGeneratorFcn) *scramClient { return &scramClient{hash: h} }

// Begin implements sarama.SCRAMClient. A user name or password that SASLprep refuses (control
// characters, unassigned code points) fails here, before anything is sent.
func (c *scramClient) Begin(user, password, authzID string) error {
	cl, err := c.hash.NewClient(user, password, authzID)
	if err != nil {
		return fmt.Errorf("scram: prepare the credentials (SASLprep): %w", err)
	}
	c.conv = cl.NewConversation()
	return nil
}

// Step implements sarama.SCRAMClient.
func (c *scramClient) Step(challenge string) (string, error) {
	if c.conv == nil {
		return "", errors.New("scram: Step before Begin")
	}
	resp, err := c.conv.Step(challenge)
	if err != nil {
		return "", fmt.Errorf("scram: %w", err)
	}
	return resp, nil
}

// Done implements sarama.SCRAMClient.
func (c *scramClient) Done() bool { return c.conv != nil && c.conv.Done() }
