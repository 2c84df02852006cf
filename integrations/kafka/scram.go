package kafka

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// scramClient is the client side of SCRAM (RFC 5802) as Kafka uses it:
// no channel binding, one round trip for the proof, one for the server's
// signature. sarama leaves the implementation to its users, and the module
// has no SCRAM dependency, so this small one lives here.
type scramClient struct {
	newHash func() hash.Hash

	user, password, authzID string
	nonce                   string
	clientFirstBare         string
	serverSignature         []byte
	step                    int
	done                    bool
}

func sha256Hash() hash.Hash { return sha256.New() }
func sha512Hash() hash.Hash { return sha512.New() }

func newSCRAMClient(h func() hash.Hash) *scramClient { return &scramClient{newHash: h} }

// Begin implements sarama.SCRAMClient.
func (c *scramClient) Begin(user, password, authzID string) error {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	*c = scramClient{newHash: c.newHash, user: user, password: password, authzID: authzID,
		nonce: base64.RawStdEncoding.EncodeToString(b[:])}
	return nil
}

// Done implements sarama.SCRAMClient.
func (c *scramClient) Done() bool { return c.done }

// Step implements sarama.SCRAMClient.
func (c *scramClient) Step(challenge string) (string, error) {
	c.step++
	switch c.step {
	case 1:
		c.clientFirstBare = "n=" + scramEscape(c.user) + ",r=" + c.nonce
		return c.gs2Header() + c.clientFirstBare, nil
	case 2:
		return c.clientFinal(challenge)
	case 3:
		c.done = true
		fields := scramFields(challenge)
		if e, ok := fields["e"]; ok {
			return "", fmt.Errorf("scram: server rejected the proof: %s", e)
		}
		v, err := base64.StdEncoding.DecodeString(fields["v"])
		if err != nil || !hmac.Equal(v, c.serverSignature) {
			return "", errors.New("scram: the server's signature does not verify")
		}
		return "", nil
	default:
		return "", errors.New("scram: conversation already finished")
	}
}

func (c *scramClient) gs2Header() string {
	if c.authzID == "" {
		return "n,,"
	}
	return "n,a=" + scramEscape(c.authzID) + ","
}

func (c *scramClient) clientFinal(serverFirst string) (string, error) {
	fields := scramFields(serverFirst)
	if e, ok := fields["e"]; ok {
		return "", fmt.Errorf("scram: server error: %s", e)
	}
	nonce := fields["r"]
	if !strings.HasPrefix(nonce, c.nonce) || len(nonce) == len(c.nonce) {
		return "", errors.New("scram: server nonce does not extend the client nonce")
	}
	salt, err := base64.StdEncoding.DecodeString(fields["s"])
	if err != nil || len(salt) == 0 {
		return "", errors.New("scram: server sent no usable salt")
	}
	iterations, err := strconv.Atoi(fields["i"])
	if err != nil || iterations < 1 {
		return "", errors.New("scram: server sent no usable iteration count")
	}
	size := c.newHash().Size()
	salted, err := pbkdf2.Key(c.newHash, c.password, salt, iterations, size)
	if err != nil {
		return "", fmt.Errorf("scram: derive key: %w", err)
	}
	clientKey := c.hmac(salted, "Client Key")
	h := c.newHash()
	h.Write(clientKey)
	storedKey := h.Sum(nil)

	withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(c.gs2Header())) + ",r=" + nonce
	authMessage := c.clientFirstBare + "," + serverFirst + "," + withoutProof
	signature := c.hmac(storedKey, authMessage)
	proof := make([]byte, len(clientKey))
	for i := range clientKey {
		proof[i] = clientKey[i] ^ signature[i]
	}
	c.serverSignature = c.hmac(c.hmac(salted, "Server Key"), authMessage)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
}

func (c *scramClient) hmac(key []byte, msg string) []byte {
	m := hmac.New(c.newHash, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func scramFields(msg string) map[string]string {
	out := make(map[string]string)
	for part := range strings.SplitSeq(msg, ",") {
		if k, v, ok := strings.Cut(part, "="); ok && len(k) == 1 {
			out[k] = v
		}
	}
	return out
}

func scramEscape(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}
