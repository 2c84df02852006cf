package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseSentinelURL(t *testing.T) {
	tests := []struct {
		url                    string
		addrs                  []string
		master                 string
		db                     int
		user, pw               string
		sentinelUser, sentinel string
		tls                    bool
	}{
		{url: "redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster", addrs: []string{"s1:26379", "s2:26379", "s3:26379"}, master: "mymaster"},
		{url: "redis+sentinel://redis-headless.ns.svc.cluster.local/mymaster/2", addrs: []string{"redis-headless.ns.svc.cluster.local:26379"}, master: "mymaster", db: 2},
		{url: "redis+sentinel://:p%40ss@s1,s2:5000/mymaster", addrs: []string{"s1:26379", "s2:5000"}, master: "mymaster", pw: "p@ss", sentinel: "p@ss"},
		{url: "redis+sentinel://alice:apw@s1:26379/m?sentinel_password=", addrs: []string{"s1:26379"}, master: "m", user: "alice", pw: "apw", sentinelUser: "alice"},
		{url: "redis+sentinel://:pw@s1:26379/m?sentinel_username=sent&sentinel_password=spw", addrs: []string{"s1:26379"}, master: "m", pw: "pw", sentinelUser: "sent", sentinel: "spw"},
		{url: "rediss+sentinel://s1:26380/mymaster/0", addrs: []string{"s1:26380"}, master: "mymaster", tls: true},
		{url: "redis+sentinel://[::1]:26379,[::2]/m", addrs: []string{"[::1]:26379", "[::2]:26379"}, master: "m"},
	}
	for _, tt := range tests {
		o, err := ParseRedisURL(tt.url)
		if err != nil {
			t.Errorf("%s: %v", tt.url, err)
			continue
		}
		if !reflect.DeepEqual(o.Addrs, tt.addrs) || o.MasterName != tt.master || o.IsClusterMode || o.DB != tt.db ||
			o.Username != tt.user || o.Password != tt.pw || o.SentinelUsername != tt.sentinelUser || o.SentinelPassword != tt.sentinel ||
			(o.TLSConfig != nil) != tt.tls {
			t.Errorf("%s: Addrs %v master %q DB %d user %q password %q sentinel %q/%q TLS %v", tt.url, o.Addrs, o.MasterName, o.DB,
				o.Username, o.Password, o.SentinelUsername, o.SentinelPassword, o.TLSConfig != nil)
		}
		// The primary's address comes from the Sentinels: each connection checks its own host.
		if tt.tls && o.TLSConfig.ServerName != "" {
			t.Errorf("%s: TLS ServerName %q, want none", tt.url, o.TLSConfig.ServerName)
		}
	}
	o, err := ParseRedisURL("redis+sentinel://s1/m?dial_timeout=5s&max_retries=4&pool_size=7")
	if err != nil || o.DialTimeout != 5*time.Second || o.MaxRetries != 4 || o.PoolSize != 7 {
		t.Errorf("options of a Sentinel URL: %+v %v", o, err)
	}
}

func TestParseSentinelURLErrors(t *testing.T) {
	tests := []struct{ url, msg string }{
		{"redis+sentinel:///mymaster", "names no Sentinel (want redis+sentinel://[user:password@]host1:26379,host2:26379/mastername[/db])"},
		{"redis+sentinel://u:secretvalue@s1:26379,,s2/m", "names an empty Sentinel address (want redis+sentinel://[user:password@]host1:26379,host2:26379/mastername[/db])"},
		{"redis+sentinel://u:secretvalue@s1:26379,s2:port/m", `has a Sentinel address, "s2:port", that is not host:port`},
		{"redis+sentinel://u:secretvalue@s1:26379,s2:0/m", `has a Sentinel address, "s2:0", that is not host:port`},
		{"redis+sentinel://u:secretvalue@s1:26379", "names no master (want redis+sentinel://[user:password@]host1:26379,host2:26379/mastername[/db]: the name the Sentinels monitor the primary by, such as mymaster)"},
		{"redis+sentinel://u:secretvalue@s1:26379/m/zero", `names the database "zero", not a number`},
		{"redis+sentinel://u:secretvalue@s1:26379/m/0/x", "has a path of more than the master name and the database"},
		{"redis+sentinel://u:secretvalue@s1/m?addr=s2:26379", "has the option addr=, which the URL's own parts say"},
		{"redis+sentinel://s1/m?password=secretvalue", "has the option password=, which the URL's own parts say"},
		{"redis+sentinel://u:secretvalue@s1/m?route_randomly=true", "has the option route_randomly=, which streamwatch does not support with Sentinels: it reads and writes the primary only"},
		{"redis+sentinel://u:secretvalue@s1/m?colour=blue", "is not a valid Redis URL: redis: unexpected option: colour"},
		{"redis+sentinel://u:secretvalue@s1/m?sentinel_password=a&sentinel_password=b", "has the option sentinel_password= more than once"},
		{"redis+sentinel://u:secret%zzvalue@s1/m", "has user information that is not valid"},
		{"redis+sentinel://u:secret#value@s1/m", "has a #fragment (percent-encode # in a password as %23)"},
		{"redis+sentinel://s1/m?a=%zz", "has query options that are not valid"},
		{"redis+sentinel://u:secretvalue@s1/m?dial_timeout=soon", `is not a valid Redis URL: redis: invalid dial_timeout duration: time: invalid duration "soon"`},
	}
	for _, tt := range tests {
		_, err := LoadSecrets(env(map[string]string{EnvRedisURL: tt.url}), SecretNeeds{Redis: true})
		var errs Errors
		if !errors.As(err, &errs) || !strings.Contains(err.Error(), EnvRedisURL+": "+tt.msg) {
			t.Errorf("%s: %v, want REDIS_URL: %s", tt.url, err, tt.msg)
			continue
		}
		if strings.Contains(err.Error(), "secretvalue") {
			t.Errorf("%s: the error shows the password: %v", tt.url, err)
		}
	}
}

// TestSentinelPasswordIsASecret: the Sentinels' own password is redacted like the others.
func TestSentinelPasswordIsASecret(t *testing.T) {
	s, err := LoadSecrets(env(map[string]string{EnvRedisURL: "redis+sentinel://:datapw@s1/m?sentinel_password=sentinelpw"}), SecretNeeds{Redis: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"datapw", "sentinelpw"} {
		found := false
		for _, v := range s.Values() {
			found = found || v == want
		}
		if !found {
			t.Errorf("Values() = %q lacks %q", s.Values(), want)
		}
	}
}
