package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// machine describes where the figures were measured.
type machine struct {
	cpu        string
	cores      int // physical cores
	logical    int
	virtual    bool
	memory     string
	os         string
	goVersion  string
	redis      string
	loadBefore string
	loadAfter  string
}

func describeMachine(ctx context.Context, root string) machine {
	m := machine{cpu: "unknown CPU", logical: runtime.NumCPU(), memory: "unknown", os: runtime.GOOS}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		physical := map[string]int{}
		var id string
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch k {
			case "model name":
				m.cpu = v
			case "physical id":
				id = v
			case "cpu cores":
				n, _ := strconv.Atoi(v)
				physical[id] = n
			case "flags":
				m.virtual = m.virtual || strings.Contains(" "+v+" ", " hypervisor ")
			}
		}
		for _, n := range physical {
			m.cores += n
		}
	}
	if m.cores == 0 {
		m.cores = m.logical
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kib, _ := strconv.ParseFloat(f[1], 64)
				m.memory = fmt.Sprintf("%.1f GiB", kib/1024/1024)
			}
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				m.os = strings.Trim(v, `"`)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.os += ", Linux " + strings.TrimSpace(string(b))
	}
	m.goVersion = runtime.Version()
	cmd := exec.CommandContext(ctx, "go", "version")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		m.goVersion = strings.TrimPrefix(strings.TrimSpace(string(out)), "go version ")
	}
	if out, err := exec.CommandContext(ctx, "redis-server", "--version").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if v, ok := strings.CutPrefix(f, "v="); ok {
				m.redis = v
			}
		}
	}
	return m
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " / ")
}
