// Package load is streamwatch's load generator: it POSTs prepared bodies to one loopback URL
// from a fixed number of workers, stops at a request count or a time limit (whichever comes
// first), and measures throughput and per-request latency. It refuses any URL whose host is not
// a loopback address, so a benchmark can never hit a real service by mistake.
package load

import (
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
	// Client is the HTTP client; nil means one with Workers keep-alive connections.
	Client *http.Client
}

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
	Seconds    float64 `json:"seconds"`      // from the first request to the last answer
	AlertsPerS float64 `json:"alertsPerSec"` // Alerts / Seconds
	P50ms      float64 `json:"p50ms"`
	P99ms      float64 `json:"p99ms"`
	MaxMs      float64 `json:"maxMs"`
	StoppedBy  string  `json:"stoppedBy"` // "count" or "time"
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
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			MaxIdleConns: workers, MaxIdleConnsPerHost: workers, IdleConnTimeout: time.Minute,
			DisableCompression: true,
		}}
	}
	ctx, cancel := context.WithTimeout(ctx, p.Duration)
	defer cancel()

	type outcome struct {
		latency  time.Duration
		status   int
		err      string
		opened   int
		dupes    int
		finished time.Time
	}
	jobs := make(chan int)
	outcomes := make([][]outcome, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				o := outcome{}
				body := p.Bodies[i%len(p.Bodies)]
				req, err := http.NewRequest(http.MethodPost, p.URL, bytes.NewReader(body))
				if err != nil {
					o.err = err.Error()
					outcomes[w] = append(outcomes[w], o)
					continue
				}
				req.Header.Set("Content-Type", "application/json")
				if p.Token != "" {
					req.Header.Set("Authorization", "Bearer "+p.Token)
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					o.err = err.Error()
				} else {
					answer, rerr := io.ReadAll(resp.Body)
					resp.Body.Close()
					o.status = resp.StatusCode
					if rerr != nil {
						o.err = rerr.Error()
					} else if resp.StatusCode/100 != 2 {
						o.err = fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, answer)
					}
					o.opened = bytes.Count(answer, []byte(`"result":"opened"`))
					o.dupes = bytes.Count(answer, []byte(`"result":"duplicate"`))
				}
				o.finished = time.Now()
				o.latency = o.finished.Sub(t0)
				outcomes[w] = append(outcomes[w], o)
			}
		}()
	}
	stoppedBy := "count"
	var interval time.Duration
	if p.Rate > 0 {
		interval = time.Duration(float64(time.Second) / p.Rate)
	}
dispatch:
	for i := 0; i < p.Requests; i++ {
		if interval > 0 {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				select {
				case <-ctx.Done():
					stoppedBy = "time"
					break dispatch
				case <-time.After(d):
				}
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
	wg.Wait()
	if p.Client == nil {
		client.CloseIdleConnections()
	}

	r := Result{Status: map[int]int{}, StoppedBy: stoppedBy}
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
