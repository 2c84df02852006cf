package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The schemes of a REDIS_URL that names Sentinels.
const (
	sentinelScheme    = "redis+sentinel"
	sentinelTLSScheme = "rediss+sentinel"
)

// sentinelPort is the port of a Sentinel address that names none.
const sentinelPort = "26379"

// sentinelUsage is the shape of a Sentinel URL, for errors.
const sentinelUsage = "redis+sentinel://[user:password@]host1:26379,host2:26379/mastername[/db]"

// parseSentinelURL reads REDIS_URL when it names Sentinels:
//
//	redis+sentinel://[user:password@]host1[:26379],host2[:26379],…/mastername[/db][?option=value…]
//
// (rediss+sentinel:// for TLS to the Sentinels and the data nodes alike). The user and password
// are the data nodes' and, unless sentinel_username= or sentinel_password= say otherwise (an
// empty value: none), the Sentinels' too, as the common Helm chart sets them up. go-redis's
// ParseFailoverURL reads the other options (dial_timeout, pool_size, …). Options that would read
// from replicas (route_by_latency, route_randomly, replica_only) are refused: streamwatch's reads
// must see its own writes. With TLS every connection verifies the host it dials, since the
// primary's address is the one the Sentinels give.
func parseSentinelURL(val, scheme, rest string) (*redis.UniversalOptions, error) {
	if strings.Contains(rest, "#") {
		return nil, fmt.Errorf("has a #fragment (percent-encode # in a password as %%23)")
	}
	rest, rawQuery, _ := strings.Cut(rest, "?")
	authority, rawPath, _ := strings.Cut(rest, "/")
	var user *url.Userinfo
	hostList := authority
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		// url.Parse decodes the user information (percent-encoded characters) as for any URL.
		u, err := url.Parse("redis://" + authority[:i] + "@host")
		if err != nil || u.User == nil {
			return nil, fmt.Errorf("has user information that is not valid (want user:password@, with characters such as / ? # @ : percent-encoded)")
		}
		user, hostList = u.User, authority[i+1:]
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("has query options that are not valid (want ?option=value&…)")
	}
	if hostList == "" {
		return nil, fmt.Errorf("names no Sentinel (want %s)", sentinelUsage)
	}
	var hosts []string
	for _, h := range strings.Split(hostList, ",") {
		if h == "" {
			return nil, fmt.Errorf("names an empty Sentinel address (want %s)", sentinelUsage)
		}
		if !strings.Contains(h, ":") || strings.HasSuffix(h, "]") {
			h = net.JoinHostPort(strings.Trim(h, "[]"), sentinelPort)
		}
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("has a Sentinel address, %q, that is not host:port (want %s)", h, sentinelUsage)
		}
		hosts = append(hosts, h)
	}
	path := strings.Split(strings.Trim(rawPath, "/"), "/")
	master, db := path[0], ""
	switch {
	case master == "":
		return nil, fmt.Errorf("names no master (want %s: the name the Sentinels monitor the primary by, such as mymaster)", sentinelUsage)
	case len(path) > 2:
		return nil, fmt.Errorf("has a path of more than the master name and the database (want %s)", sentinelUsage)
	case len(path) == 2:
		db = path[1]
		if n, err := strconv.Atoi(db); err != nil || n < 0 {
			return nil, fmt.Errorf("names the database %q, not a number (want %s)", db, sentinelUsage)
		}
	}
	for _, opt := range []string{"addr", "master_name", "db", "username", "password"} {
		if q.Has(opt) {
			return nil, fmt.Errorf("has the option %s=, which the URL's own parts say (want %s)", opt, sentinelUsage)
		}
	}
	for _, opt := range []string{"route_by_latency", "route_randomly", "replica_only", "cluster"} {
		if q.Has(opt) {
			return nil, fmt.Errorf("has the option %s=, which streamwatch does not support with Sentinels: it reads and writes the primary only", opt)
		}
	}
	username, pass := "", ""
	if user != nil {
		username = user.Username()
		pass, _ = user.Password()
	}
	sentinelUser, sentinelPass := username, pass
	for opt, v := range map[string]*string{"sentinel_username": &sentinelUser, "sentinel_password": &sentinelPass} {
		if q.Has(opt) {
			if len(q[opt]) > 1 {
				return nil, fmt.Errorf("has the option %s= more than once", opt)
			}
			*v = q.Get(opt)
			q.Del(opt)
		}
	}

	// go-redis's own form: the first Sentinel as the host, the others as addr=, the master and
	// the database as options; no user information, which go-redis would give the Sentinels only.
	goScheme := "redis"
	if scheme == sentinelTLSScheme {
		goScheme = "rediss"
	}
	q.Set("master_name", master)
	for _, h := range hosts[1:] {
		q.Add("addr", h)
	}
	if db != "" {
		q.Set("db", db)
	}
	raw := (&url.URL{Scheme: goScheme, Host: hosts[0], RawQuery: q.Encode()}).String()
	o, err := redis.ParseFailoverURL(raw)
	if err != nil {
		return nil, scrubbed(err, user, val, raw)
	}
	if o.TLSConfig != nil {
		o.TLSConfig.ServerName = ""
	}
	return &redis.UniversalOptions{
		Addrs: o.SentinelAddrs, MasterName: o.MasterName, DB: o.DB, ClientName: o.ClientName, Protocol: o.Protocol,
		Username: username, Password: pass, SentinelUsername: sentinelUser, SentinelPassword: sentinelPass,
		TLSConfig:  o.TLSConfig,
		MaxRetries: o.MaxRetries, MinRetryBackoff: o.MinRetryBackoff, MaxRetryBackoff: o.MaxRetryBackoff,
		DialTimeout: o.DialTimeout, DialerRetries: o.DialerRetries, DialerRetryTimeout: o.DialerRetryTimeout,
		ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout, ContextTimeoutEnabled: o.ContextTimeoutEnabled,
		PoolFIFO: o.PoolFIFO, PoolSize: o.PoolSize, PoolTimeout: o.PoolTimeout, MaxConcurrentDials: o.MaxConcurrentDials,
		MinIdleConns: o.MinIdleConns, MaxIdleConns: o.MaxIdleConns, MaxActiveConns: o.MaxActiveConns,
		ConnMaxIdleTime: o.ConnMaxIdleTime, ConnMaxLifetime: o.ConnMaxLifetime, ConnMaxLifetimeJitter: o.ConnMaxLifetimeJitter,
		PipelinePoolSize: o.PipelinePoolSize, PipelineReadBufferSize: o.PipelineReadBufferSize,
		PipelineWriteBufferSize: o.PipelineWriteBufferSize,
		DisableIdentity:         o.DisableIdentity, IdentitySuffix: o.IdentitySuffix,
	}, nil
}
