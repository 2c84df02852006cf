// Command swbench measures streamwatch and writes bench/RESULTS.md; `make bench` runs it through
// scripts/bench. In one go it:
//
//  1. builds the streamwatch binary with the release flags, the load generator (swload) and the
//     Go benchmarks of package bench, and installs Prometheus Alertmanager once into a cache;
//  2. starts a redis-server on a free loopback port, persisted as in production (appendonly
//     yes, appendfsync everysec), stopped by its PID;
//  3. repeats -reps times: alert ingest into a fresh streamwatch process (batches of 1 and 20,
//     half duplicates), with its resident set idle and at peak; the same alerts into a fresh
//     Alertmanager, and into another from twice the connections; an alert storm against Slack's
//     fake with its per-channel rate limit; the first -distinct-reps times a storm of distinct
//     alerts (and once with flood protection off); once, Redis memory per incident and alert;
//  4. runs the lag and checkpoint benchmarks with -count -reps;
//  5. writes every figure as min / median / max over the runs.
//
// Everything listens on 127.0.0.1 only. Each run's request count and time are bounded.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type options struct {
	root        string
	out         string
	cache       string
	reps        int
	amVersion   string
	skipAM      bool
	skipGoBench bool
	workers     int
	requests1   int
	requests20  int
	ingestLimit time.Duration
	stormAlerts int
	stormWindow time.Duration
	// The distinct-alert storm: alerts, the time they are spread over, how many runs with flood
	// protection on, and whether to run it once with flood protection off.
	distinctAlerts int
	distinctWindow time.Duration
	distinctReps   int
	distinctOff    bool
	skipMemory     bool
	benchtime      string
	keepTmp        bool
	logLevel       string
	started        int64
	// generator drives the ingest comparison: wrk (Debian's; the default when it is installed)
	// or swload.
	generator string
	// abBase, when set, is a base binary to compare this tree's with (make bench-ab); abName
	// names it in the table.
	abBase, abName string
}

// env is what every step shares.
type env struct {
	opts            options
	started         time.Time
	tmp             string
	version         string
	streamwatchBin  string
	swloadBin       string
	benchTestBin    string
	alertmanagerBin string
	alertmanagerErr error // why Alertmanager is not compared, when it is not
	redis           *redisServer
	webhookToken    string
	logf            func(format string, args ...any)
	progress        io.Writer // where the Go benchmarks' output is echoed
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "swbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("swbench", flag.ContinueOnError)
	fs.StringVar(&o.root, "root", ".", "the streamwatch module's directory")
	fs.StringVar(&o.out, "out", "bench/RESULTS.md", "where to write the results (relative to -root)")
	fs.StringVar(&o.cache, "cache", "", "cache directory for the Alertmanager binary (default $STREAMWATCH_BENCH_CACHE, else the user cache dir)")
	fs.IntVar(&o.reps, "reps", 5, "repetitions of every measurement")
	fs.StringVar(&o.amVersion, "alertmanager-version", "v0.31.1", "Alertmanager to compare with (newer versions do not go install)")
	fs.BoolVar(&o.skipAM, "skip-alertmanager", false, "do not compare with Alertmanager")
	fs.BoolVar(&o.skipGoBench, "skip-gobench", false, "do not run the lag and checkpoint benchmarks")
	fs.IntVar(&o.workers, "workers", 16, "keep-alive connections (concurrent senders) during ingest; Alertmanager is measured again from twice as many")
	fs.IntVar(&o.requests1, "requests1", 60000, "ingest requests with 1 alert each, at most, per run")
	fs.IntVar(&o.requests20, "requests20", 12000, "ingest requests with 20 alerts each, at most, per run")
	fs.DurationVar(&o.ingestLimit, "ingest-limit", 5*time.Second, "time limit of one ingest run (the runs are sized to stop by time, so both sides are measured over the same span)")
	fs.IntVar(&o.stormAlerts, "storm-alerts", 10000, "duplicates in the storm")
	fs.DurationVar(&o.stormWindow, "storm-window", 10*time.Second, "time the storm's duplicates are spread over (stands for 60 s; thread_coalesce is scaled alike)")
	fs.IntVar(&o.distinctAlerts, "distinct-alerts", 10000, "alerts of the distinct-alert storm, each with its own key")
	fs.DurationVar(&o.distinctWindow, "distinct-window", time.Minute, "time the distinct-alert storm is spread over (real time: the flood limit is per minute)")
	fs.IntVar(&o.distinctReps, "distinct-reps", 3, "runs of the distinct-alert storm with flood protection (each takes about 2 minutes), at most -reps")
	fs.BoolVar(&o.distinctOff, "distinct-off", true, "also run the distinct-alert storm once with flood protection off")
	fs.BoolVar(&o.skipMemory, "skip-memory", false, "do not measure Redis memory per incident, per alert and after 100,000 distinct alerts")
	fs.StringVar(&o.benchtime, "benchtime", "1s", "-benchtime of the Go benchmarks")
	fs.BoolVar(&o.keepTmp, "keep", false, "keep the temporary directory (logs, configs)")
	fs.StringVar(&o.logLevel, "log-level", "info", "streamwatch's --log-level during the measurements")
	fs.Int64Var(&o.started, "started-unix", 0, "when `make bench` started (Unix seconds), to report its whole duration")
	fs.StringVar(&o.generator, "generator", "", "load generator of the ingest comparison: wrk or swload (default: wrk when installed)")
	fs.StringVar(&o.abBase, "ab", "", "A/B mode: a base streamwatch binary to alternate with this tree's in the ingest measurement (scripts/bench-ab builds it)")
	fs.StringVar(&o.abName, "ab-name", "base", "what the base binary is (a commit), for the A/B table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.reps < 1 || o.stormWindow <= 0 || o.stormAlerts < 1 || o.distinctAlerts < 1 || o.distinctWindow <= 0 || o.distinctReps < 0 {
		return fmt.Errorf("need -reps ≥ 1, -storm-alerts ≥ 1, -storm-window > 0, -distinct-alerts ≥ 1, -distinct-window > 0, -distinct-reps ≥ 0")
	}
	if o.generator == "" {
		o.generator = "swload"
		if _, err := exec.LookPath("wrk"); err == nil {
			o.generator = "wrk"
		}
	}
	if o.generator != "wrk" && o.generator != "swload" {
		return fmt.Errorf("-generator %q: want wrk or swload", o.generator)
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	o.root = root
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("-root %s is not the streamwatch module: %w", root, err)
	}
	if o.cache == "" {
		o.cache = os.Getenv("STREAMWATCH_BENCH_CACHE")
	}
	if o.cache == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			c = os.TempDir()
		}
		o.cache = filepath.Join(c, "streamwatch-bench")
	}
	started := time.Now()
	if o.started > 0 {
		started = time.Unix(o.started, 0)
	}
	e := &env{opts: o, started: started, webhookToken: "whk-bench-" + randomHex(8), progress: stderr,
		logf: func(format string, args ...any) {
			fmt.Fprintf(stderr, "swbench %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		}}
	if e.tmp, err = os.MkdirTemp("", "swbench"); err != nil {
		return err
	}
	if o.keepTmp {
		defer e.logf("logs and configs kept in %s", e.tmp)
	} else {
		defer os.RemoveAll(e.tmp)
	}
	machine := describeMachine(ctx, root)

	if err := e.build(ctx); err != nil {
		return err
	}
	if o.skipAM {
		e.alertmanagerErr = fmt.Errorf("skipped by -skip-alertmanager")
	} else if e.alertmanagerBin, err = ensureAlertmanager(ctx, o.cache, o.amVersion, e.logf); err != nil {
		e.alertmanagerErr = err
		e.logf("Alertmanager comparison skipped: %v", err)
	}
	if e.redis, err = startRedis(ctx, e.tmp, "redis"); err != nil {
		return err
	}
	defer e.redis.close()

	machine.loadBefore = loadAverage()
	res := &results{reps: o.reps}
	if o.abBase != "" {
		if o.generator != "wrk" {
			return fmt.Errorf("A/B needs wrk (Debian's package wrk)")
		}
		if err := e.abRun(ctx, res); err != nil {
			return err
		}
		machine.loadAfter = loadAverage()
		e.abTable(os.Stdout, res, machine)
		return nil
	}
	for rep := 1; rep <= o.reps; rep++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Alternate who goes first, so that a slow phase of a shared machine is not always
		// charged to the same side.
		steps := []func(context.Context, int, *results) error{e.ingestStreamwatch, e.ingestAlertmanager}
		if rep%2 == 0 {
			steps[0], steps[1] = steps[1], steps[0]
		}
		steps = append(steps, e.storm)
		if rep <= o.distinctReps {
			steps = append(steps, func(ctx context.Context, rep int, res *results) error { return e.distinctStorm(ctx, rep, true, res) })
		}
		if rep == 1 && o.distinctOff {
			steps = append(steps, func(ctx context.Context, rep int, res *results) error { return e.distinctStorm(ctx, rep, false, res) })
		}
		if rep == 1 && !o.skipMemory {
			steps = append(steps, func(ctx context.Context, _ int, res *results) error { return e.redisMemory(ctx, res) })
		}
		for _, step := range append(steps, e.goBenchRound) {
			if err := step(ctx, rep, res); err != nil {
				return fmt.Errorf("run %d: %w", rep, err)
			}
		}
	}
	if o.skipGoBench {
		res.goBenchSkipped = "skipped by -skip-gobench"
	}
	machine.loadAfter = loadAverage()
	out := o.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	doc := e.render(machine, res, time.Since(e.started))
	if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
		return err
	}
	e.logf("wrote %s after %v", out, time.Since(e.started).Round(time.Second))
	return nil
}

// build compiles the release binary (the Makefile's flags), swload and the Go benchmarks, so
// that no compiler runs while anything is measured.
func (e *env) build(ctx context.Context) error {
	e.version = "dev"
	if out, err := exec.CommandContext(ctx, "git", "-C", e.opts.root, "describe", "--tags", "--always", "--dirty").Output(); err == nil {
		e.version = strings.TrimSpace(string(out))
	}
	e.streamwatchBin = filepath.Join(e.tmp, "streamwatch")
	e.swloadBin = filepath.Join(e.tmp, "swload")
	e.benchTestBin = filepath.Join(e.tmp, "bench.test")
	builds := [][]string{
		{"build", "-trimpath", "-tags", "nodemo", "-ldflags", "-s -w -X main.version=" + e.version, "-o", e.streamwatchBin, "."},
		{"build", "-o", e.swloadBin, "./bench/cmd/swload"},
		{"test", "-c", "-o", e.benchTestBin, "./bench"},
	}
	for _, args := range builds {
		e.logf("go %s", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = e.opts.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
