package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamwatch/streamwatch/app"
	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// Redis deployments other than one plain server: a password or an ACL user, TLS with a private
// CA, and a Redis Cluster.

const (
	redisPassword = "redis-pw-0d4e1"
	alicePassword = "alice-pw-77b2c"
	wrongPassword = "wrong-pw-3c9f8"
)

// threadDuplicates is the scenario of TestE2EDuplicatesThreadIntoOneIncident: three posts of one
// alert and one of another make two roots, with the two duplicates in the first one's thread.
func threadDuplicates(t *testing.T, in *instance) {
	t.Helper()
	am, err := os.ReadFile("testdata/alertmanager-sms.json")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`"result":"opened"`, `"result":"duplicate"`, `"result":"duplicate"`} {
		if body := in.ok("/webhooks/alertmanager", string(am)); !strings.Contains(body, `"incident":"INC-1"`) || !strings.Contains(body, want) {
			t.Fatalf("post %d answered %s, want INC-1 and %s", i+1, body, want)
		}
	}
	if body := in.ok("/webhooks/generic", generic("disk almost full", "disk-1")); !strings.Contains(body, `"incident":"INC-2"`) {
		t.Fatalf("the other alert answered %s, want INC-2", body)
	}
	waitFor(t, in.slack, "two roots and the duplicates in the first one's thread", func(s *slackfake.Server) bool {
		pipe := roots(s, "C0PIPE")
		return len(pipe) == 1 && len(roots(s, "C0DEFAULT")) == 1 && echoes(s, "C0PIPE", pipe[0].TS) == 0 &&
			strings.Contains(mustMessage(s, "C0PIPE", pipe[0].TS).Text, "3 occurrences")
	})
	if r := roots(in.slack, "C0PIPE")[0]; !strings.Contains(r.Text, "INC-1") || !strings.Contains(r.Text, "client replied sms") {
		t.Fatalf("first root %q", r.Text)
	}
	if r := roots(in.slack, "C0DEFAULT")[0]; !strings.Contains(r.Text, "INC-2") || !strings.Contains(r.Text, "disk almost full") {
		t.Fatalf("second root %q", r.Text)
	}
}

// noSecretsLogged fails the test if the logs hold any of secrets.
func noSecretsLogged(t *testing.T, in *instance, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(in.logs.String(), s) {
			t.Fatalf("the logs contain the secret %q", s)
		}
	}
}

// waitRedisUnreachable polls /readyz until it answers 503 saying redis is unreachable, and
// fails the test if it is ever ready.
func waitRedisUnreachable(t *testing.T, in *instance) {
	t.Helper()
	var last string
	err := wait.Until(context.Background(), 10*time.Second, "/readyz saying redis unreachable", func() bool {
		code, body := in.readyz()
		last = fmt.Sprint(code, " ", body)
		if code == 200 {
			t.Fatalf("/readyz answered %s", last)
		}
		return code == 503 && strings.Contains(body, `"redis":"unreachable"`)
	})
	if err != nil {
		t.Fatalf("%v; last answer %s\nlogs:\n%s", err, last, in.logs)
	}
}

// postAlert posts a generic alert and returns the status, Retry-After and body.
func postAlert(t *testing.T, in *instance, key string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", in.url+"/webhooks/generic", strings.NewReader(generic("client replied sms", key)))
	req.Header.Set("Authorization", "Bearer "+webhookToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// startAuthRedis starts a server that wants redisPassword for the default user and has an ACL
// user alice with alicePassword.
func startAuthRedis(t *testing.T) *testredis.Server {
	t.Helper()
	srv, err := testredis.Start("--requirepass", redisPassword, "--user", "alice", "on", ">"+alicePassword, "~*", "&*", "+@all")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func TestE2ERedisPassword(t *testing.T) {
	srv := startAuthRedis(t)
	for name, url := range map[string]string{
		"password": "redis://:" + redisPassword + "@" + srv.Addr + "/0",
		"acl user": "redis://alice:" + alicePassword + "@" + srv.Addr + "/0",
	} {
		t.Run(name, func(t *testing.T) {
			in := start(t, setup{redisURL: url})
			threadDuplicates(t, in)
			noSecretsLogged(t, in, redisPassword, alicePassword)
		})
	}
}

func TestE2ERedisWrongPassword(t *testing.T) {
	srv := startAuthRedis(t)
	for name, url := range map[string]string{
		"password": "redis://:" + wrongPassword + "@" + srv.Addr + "/0",
		"acl user": "redis://alice:" + wrongPassword + "@" + srv.Addr + "/0",
	} {
		t.Run(name, func(t *testing.T) {
			in := start(t, setup{redisURL: url, noWait: true})
			// Start-up goes on; /readyz says why it is not ready, and webhooks ask to retry.
			waitRedisUnreachable(t, in)
			if code, retry, body := postAlert(t, in, "wrong-pw"); code != 503 || retry == "" {
				t.Errorf("webhook with a wrong Redis password: %d %s (Retry-After %q), want 503 with Retry-After", code, body, retry)
			}
			line := grepLines(in.logs.String(), "WRONGPASS")
			if line == "" {
				t.Errorf("no log line says WRONGPASS:\n%s", in.logs)
			}
			t.Logf("log: %s", strings.SplitN(line, "\n", 2)[0])
			noSecretsLogged(t, in, wrongPassword, url)
		})
	}
}

func TestE2ERedisTLS(t *testing.T) {
	srv, err := testredis.StartTLS()
	if errors.Is(err, testredis.ErrNoTLS) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Run("trusting the CA", func(t *testing.T) {
		in := start(t, setup{redisURL: srv.URL, env: map[string]string{config.EnvRedisTLSCAFile: srv.CAFile}})
		if !strings.Contains(in.logs.String(), `"redis_tls":true`) {
			t.Errorf("the start-up line does not say redis_tls:\n%s", grepLines(in.logs.String(), "starting"))
		}
		threadDuplicates(t, in)
	})
	t.Run("without the CA", func(t *testing.T) {
		in := start(t, setup{redisURL: srv.URL, noWait: true})
		waitRedisUnreachable(t, in)
		if code, retry, body := postAlert(t, in, "no-ca"); code != 503 || retry == "" {
			t.Errorf("webhook without the CA: %d %s (Retry-After %q), want 503 with Retry-After", code, body, retry)
		}
		if !strings.Contains(in.logs.String(), "certificate signed by unknown authority") {
			t.Errorf("no log line names the certificate problem:\n%s", in.logs)
		}
	})
}

func TestE2ERedisCluster(t *testing.T) {
	c, err := testredis.StartCluster(3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Run("threading", func(t *testing.T) {
		in := start(t, setup{redisURL: c.URL})
		threadDuplicates(t, in)
	})
	t.Run("every script", func(t *testing.T) {
		opts, err := config.ParseRedisURL(c.URL)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewUniversalClient(app.UniversalOptions(opts))
		defer rdb.Close()
		if _, ok := rdb.(*redis.ClusterClient); !ok {
			t.Fatalf("the client of a cluster URL is a %T", rdb)
		}
		clusterScripts(t, rdb)
	})
}

// clusterScripts runs each Lua script of the state package on a cluster client: every key a
// script builds from KEYS[1] must be in KEYS[1]'s slot, or Redis refuses the script.
func clusterScripts(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	prefix := testredis.Prefix()
	st := state.New(rdb, prefix)
	now := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	st.SetClock(func() time.Time { return now })
	st.AutoResolveAfter = time.Minute
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s on a cluster: %v", what, err)
		}
	}
	must("EnsureOutbox", st.EnsureOutbox(ctx))
	record := func(key string, resolved bool) state.Outcome {
		t.Helper()
		out, err := st.RecordAlert(ctx, state.AlertRecord{Key: key, Fingerprint: key, Title: "client replied sms",
			Severity: 3, Pipeline: "sms-replies", Channel: "C0PIPE", Source: "test", Resolved: resolved})
		must("RecordAlert (record script)", err)
		return out
	}
	if out := record("k1", false); out.Incident != "INC-1" || out.Result != "opened" {
		t.Fatalf("first alert: %+v", out)
	}
	if out := record("k1", false); out.Result != "duplicate" {
		t.Fatalf("duplicate: %+v", out)
	}
	record("k2", false)
	record("k3", false)
	must("Acknowledge (ack script)", st.Acknowledge(ctx, "INC-1", "U0ALICE"))
	_, err := st.Note(ctx, "INC-1", "diagnosis", "streamwatch", "checked", "once")
	must("Note (note script)", err)
	must("Merge (merge script)", st.Merge(ctx, "INC-2", "INC-1", "U0ALICE"))
	must("Resolve (resolve script)", st.Resolve(ctx, "INC-1", "U0ALICE", "fixed"))
	record("k3", true)
	now = now.Add(2 * time.Minute)
	ids, err := st.AutoResolveDue(ctx)
	must("AutoResolveDue (resolve script, auto)", err)
	if len(ids) != 1 || ids[0] != "INC-3" {
		t.Fatalf("auto-resolved %v, want [INC-3]", ids)
	}
	_, err = st.Pump(ctx)
	must("Pump (pump script)", err)
	ds, err := st.ReadOutbox(ctx, "c1", false, 100, -1)
	must("ReadOutbox", err)
	if len(ds) == 0 {
		t.Fatal("the outbox is empty")
	}
	must("Complete (complete script)", st.Complete(ctx, ds[0], "1700000000.000100", "C0PIPE"))
	_, err = st.RecordProbe(ctx, "sms-replies", state.ProbeRecord{At: now, Status: "ok"})
	must("RecordProbe (probe script)", err)

	// Every key is in the slot of the hash tag, so on one master.
	var mu sync.Mutex // ForEachMaster calls its function concurrently
	holders := map[string]int{}
	var keys int
	must("ForEachMaster", rdb.(*redis.ClusterClient).ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		ks, err := m.Keys(ctx, "{"+prefix+"}*").Result()
		mu.Lock()
		defer mu.Unlock()
		if len(ks) > 0 {
			holders[m.Options().Addr] = len(ks)
			keys += len(ks)
		}
		return err
	}))
	if len(holders) != 1 || keys < 10 {
		t.Fatalf("keys of {%s} by master: %v, want every key on one master", prefix, holders)
	}
}
