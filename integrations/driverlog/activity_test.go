package driverlog

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLastWrite(t *testing.T) {
	dir := t.TempDir()
	old, fresh := filepath.Join(dir, "driver-1.log"), filepath.Join(dir, "driver-2.log")
	os.WriteFile(old, []byte("x"), 0o644)
	os.WriteFile(fresh, []byte("y"), 0o644)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	name, at, err := LastWrite([]string{filepath.Join(dir, "driver-*.log"), filepath.Join(dir, "none*.log")})
	if err != nil || name != fresh || time.Since(at) > time.Minute {
		t.Fatalf("LastWrite = %s %v %v", name, at, err)
	}
	if name, at, err := LastWrite([]string{filepath.Join(dir, "none*.log")}); err != nil || name != "" || !at.IsZero() {
		t.Fatalf("no file: %q %v %v", name, at, err)
	}
	if _, _, err := LastWrite([]string{"["}); err == nil {
		t.Fatal("a bad glob is not an error")
	}
}
