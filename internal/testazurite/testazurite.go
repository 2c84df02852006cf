// Package testazurite gives a test a real Azurite (Microsoft's Azure Storage emulator, from
// the npm registry) serving Blob storage on a loopback port. `make azurite` (which `make test`
// runs) installs it into .cache/azurite; AZURITE_BLOB may name another azurite-blob.
//
// Without Azurite a test is skipped, unless STREAMWATCH_REQUIRE_AZURITE=1 (which `make test`
// sets): then it fails, so that the Azure tests cannot silently not run.
package testazurite

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Account and Key are Azurite's well-known development account and its key.
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Server is one Azurite blob service.
type Server struct {
	// URL is the Blob service URL, account included: http://127.0.0.1:PORT/devstoreaccount1.
	URL string
}

// ConnectionString is the AZURE_STORAGE_CONNECTION_STRING that reaches this server.
func (s *Server) ConnectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=" + Account + ";AccountKey=" + Key + ";BlobEndpoint=" + s.URL + ";"
}

var listening = regexp.MustCompile(`successfully listens on (http://127\.0\.0\.1:\d+)`)

// Start starts Azurite for the test, in a temporary directory, and stops it by its PID when the
// test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binary()
	if bin == "" {
		msg := "Azurite is not installed: run `make azurite` (npm install into .cache/azurite) or set AZURITE_BLOB"
		if os.Getenv("STREAMWATCH_REQUIRE_AZURITE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	// The launcher is a node script (#!/usr/bin/env node): the process started is node itself.
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", "0", "--location", t.TempDir(),
		"--silent", "--skipApiVersionCheck", "--loose")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start azurite: %v", err)
	}
	url := make(chan string, 1)
	done := make(chan struct{})
	var seen strings.Builder // read only after done
	go func() {              // owned by the test: it ends when node's output closes, which Cleanup waits for
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case url <- m[1] + "/" + Account:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	select {
	case u := <-url:
		return &Server{URL: u}
	case <-done:
		t.Fatalf("azurite exited before listening:\n%s", seen.String())
	case <-time.After(2 * time.Minute): // only when node hangs; a start takes a second or two
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("azurite did not say it listens:\n%s", seen.String())
	}
	return nil
}

// binary is AZURITE_BLOB, else .cache/azurite/node_modules/.bin/azurite-blob in the module's
// root, else "".
func binary() string {
	if b := os.Getenv("AZURITE_BLOB"); b != "" {
		return b
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			b := filepath.Join(dir, ".cache", "azurite", "node_modules", ".bin", "azurite-blob")
			if _, err := os.Stat(b); err == nil {
				return b
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
