// Package load is streamwatch's load generator: it POSTs prepared bodies to one loopback URL
// from a fixed number of workers, stops at a request count or a time limit (whichever comes
// first), and measures throughput and per-request latency. It refuses any URL whose host is not
// a loopback address, so a benchmark can never hit a real service by mistake.
//
// It works as wrk does, so that it is not what limits the rate it measures: each worker owns
// one keep-alive connection and sends its next request as soon as the answer is read, with no
// connection pool, no goroutines per connection and no channels between them (net/http's
// client has all three). Requests are written by net/http's Request.Write and answers read by
// its http.ReadResponse; the CPU time the generator spends is measured and reported.
package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Plan is one load run.
type Plan struct {
	URL    string
	Token  string   // sent as "Authorization: Bearer …" when not empty
	Bodies [][]byte // request i sends Bodies[i%len(Bodies)]
	// AlertsPerRequest is how many alerts each body holds, to turn requests into alerts.
	AlertsPerRequest int
	// Requests bounds the requests sent; Duration bounds the time spent sending. Both are
	// required: a run always ends.
	Requests int
	Duration time.Duration
	// Workers is how many requests are in flight at most (8 when 0).
	Workers int
	// Rate paces the requests: at most Rate per second, evenly spread. 0 sends as fast as the
	// workers get answers (closed loop).
	Rate float64
}

// requestTimeout bounds one request and its answer.
const requestTimeout = 30 * time.Second

// Result is what a run measured. Latencies are per request, from writing it to reading the
// whole answer.
type Result struct {
	Requests  int         `json:"requests"`  // requests sent
	OK        int         `json:"ok"`        // answered 2xx
	Status    map[int]int `json:"status"`    // answers by HTTP status
	Errors    int         `json:"errors"`    // transport errors (no answer)
	FirstFail string      `json:"firstFail"` // the first error or non-2xx answer, for the log
	Alerts    int         `json:"alerts"`    // alerts in the requests answered 2xx
	// Opened and Duplicates count the "result" fields of streamwatch's answers.
	Opened     int     `json:"opened"`
	Duplicates int     `json:"duplicates"`
	Flooded    int     `json:"flooded"`
	Seconds    float64 `json:"seconds"`      // from the first request to the last answer
	AlertsPerS float64 `json:"alertsPerSec"` // Alerts / Seconds
	// CPUms is the CPU time the generator's process used during the run (user + system).
	CPUms       float64 `json:"cpuMs"`
	Connections int     `json:"connections"` // keep-alive connections opened
	P50ms       float64 `json:"p50ms"`
	P99ms       float64 `json:"p99ms"`
	MaxMs       float64 `json:"maxMs"`
	StoppedBy   string  `json:"stoppedBy"` // "count" or "time"
}

// CheckLoopback returns an error unless rawURL is http(s) to localhost or a loopback IP. It does
// not resolve names: only "localhost" and literal addresses are accepted.
func CheckLoopback(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("load target %q: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("load target %q: scheme must be http or https", rawURL)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("load target %q: host %q is not a loopback address; the load generator only talks to this machine", rawURL, host)
}

// Run sends the plan's requests and measures them. It returns an error only when the plan is
// unusable; failed requests are counted in the Result.
func Run(ctx context.Context, p Plan) (Result, error) {
	if err := CheckLoopback(p.URL); err != nil {
		return Result{}, err
	}
	if len(p.Bodies) == 0 || p.Requests <= 0 || p.Duration <= 0 {
		return Result{}, errors.New("load plan needs bodies, a request count and a duration")
	}
	workers := p.Workers
	if workers <= 0 {
		workers = 8
	}
	target, err := url.Parse(p.URL)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.Duration)
	defer cancel()

	type outcome struct {
		latency  time.Duration
		status   int
		err      string
		opened   int
		dupes    int
		flooded  int
		finished time.Time
	}
	// Paced runs hand out request numbers over a channel; closed-loop runs share a counter
	// (a channel hand-off per request costs the generator more than the request).
	var jobs chan int
	if p.Rate > 0 {
		jobs = make(chan int)
	}
	var next atomic.Int64
	take := func() (int, bool) {
		if jobs != nil {
			i, ok := <-jobs
			return i, ok
		}
		i := int(next.Add(1) - 1)
		if i >= p.Requests || ctx.Err() != nil {
			return 0, false
		}
		return i, true
	}
	// Every request is serialized before the clock starts, as wrk prepares its requests: the
	// generator's time goes to sending and reading, not to building requests.
	raw := make([][]byte, len(p.Bodies))
	for i, body := range p.Bodies {
		if raw[i], err = serialize(target, p.Token, body); err != nil {
			return Result{}, err
		}
	}
	outcomes := make([][]outcome, workers)
	conns := make([]int, workers)
	var wg sync.WaitGroup
	cpu0 := processCPU()
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &conn{target: target}
			defer c.close()
			for {
				i, ok := take()
				if !ok {
					break
				}
				t0 := time.Now()
				status, answer, err := c.post(raw[i%len(raw)])
				o := outcome{status: status, finished: time.Now()}
				o.latency = o.finished.Sub(t0)
				switch {
				case err != nil:
					o.err = err.Error()
				case status/100 != 2:
					o.err = fmt.Sprintf("HTTP %d: %.200s", status, answer)
				}
				o.opened = bytes.Count(answer, []byte(`"result":"opened"`))
				o.dupes = bytes.Count(answer, []byte(`"result":"duplicate"`))
				o.flooded = bytes.Count(answer, []byte(`"result":"flooded"`))
				outcomes[w] = append(outcomes[w], o)
			}
			conns[w] = c.dials
		}()
	}
	stoppedBy := "count"
	if jobs != nil {
		interval := time.Duration(float64(time.Second) / p.Rate)
	dispatch:
		for i := 0; i < p.Requests; i++ {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				select {
				case <-ctx.Done():
					stoppedBy = "time"
					break dispatch
				case <-time.After(d):
				}
			}
			select {
			case <-ctx.Done():
				stoppedBy = "time"
				break dispatch
			case jobs <- i:
			}
		}
		close(jobs)
	}
	wg.Wait()
	if jobs == nil && next.Load() < int64(p.Requests)+int64(workers) {
		stoppedBy = "time" // some worker found the time up before the count
	}

	r := Result{Status: map[int]int{}, StoppedBy: stoppedBy, CPUms: ms(processCPU() - cpu0)}
	for _, n := range conns {
		r.Connections += n
	}
	var lat []time.Duration
	last := start
	for _, list := range outcomes {
		for _, o := range list {
			r.Requests++
			if o.status != 0 {
				r.Status[o.status]++
			} else {
				r.Errors++
			}
			if o.err != "" && r.FirstFail == "" {
				r.FirstFail = o.err
			}
			if o.err == "" {
				r.OK++
				r.Alerts += max(p.AlertsPerRequest, 1)
				r.Opened += o.opened
				r.Duplicates += o.dupes
				r.Flooded += o.flooded
			}
			lat = append(lat, o.latency)
			if o.finished.After(last) {
				last = o.finished
			}
		}
	}
	r.Seconds = last.Sub(start).Seconds()
	if r.Seconds > 0 {
		r.AlertsPerS = float64(r.Alerts) / r.Seconds
	}
	slices.Sort(lat)
	r.P50ms = ms(Percentile(lat, 50))
	r.P99ms = ms(Percentile(lat, 99))
	if len(lat) > 0 {
		r.MaxMs = ms(lat[len(lat)-1])
	}
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Percentile is the nearest-rank p-th percentile of sorted latencies (0 when there are none).
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// serialize writes the POST of body to target as it goes on the wire (net/http's Request.Write).
func serialize(target *url.URL, token string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "swload")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	var b bytes.Buffer
	if err := req.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// conn is one worker's keep-alive connection to the target. It dials on first use and again
// after an error or an answer that closes the connection.
type conn struct {
	target *url.URL
	c      net.Conn
	r      *bufio.Reader
	dials  int
}

// post sends a serialized request and returns the answer's status and body.
func (c *conn) post(raw []byte) (int, []byte, error) {
	if c.c == nil {
		nc, err := net.DialTimeout("tcp", c.target.Host, 5*time.Second)
		if err != nil {
			return 0, nil, err
		}
		c.c, c.r = nc, bufio.NewReaderSize(nc, 16<<10)
		c.dials++
	}
	_ = c.c.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := c.c.Write(raw); err != nil {
		c.close()
		return 0, nil, err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.close()
		return 0, nil, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		c.close()
	}
	return resp.StatusCode, answer, err
}

func (c *conn) close() {
	if c.c != nil {
		_ = c.c.Close()
		c.c, c.r = nil, nil
	}
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
