//go:build unix

package driverlog

import (
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// A FIFO matching the glob must be reported, not opened: opening it would
// block the scan until something writes to it.
func TestScanSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "driver-fifo.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	good := writeFile(t, dir, "driver-1.log", late1)
	r := scanPaths(t, filepath.Join(dir, "driver-*.log"))
	if !slices.Equal(r.Skipped, []Skip{{Kind: SkipNotRegular, Path: fifo, Mode: "p---------"}}) || len(r.Files) != 1 || r.Files[0].Path != good {
		t.Errorf("report %+v", r)
	}
}
