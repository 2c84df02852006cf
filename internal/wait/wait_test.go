package wait_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/wait"
)

func TestUntil(t *testing.T) {
	var n atomic.Int32
	if err := wait.Until(context.Background(), 5*time.Second, "the third look", func() bool { return n.Add(1) >= 3 }); err != nil {
		t.Fatal(err)
	}
	err := wait.Until(context.Background(), 30*time.Millisecond, "never", func() bool { return false })
	if err == nil || err.Error() != "never did not happen within 30ms" {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := wait.Until(ctx, time.Minute, "never", func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's", err)
	}
}

type recorder struct{ failed string }

func (r *recorder) Helper()                      {}
func (r *recorder) Fatalf(f string, args ...any) { r.failed = fmt.Sprintf(f, args...) }

func TestFor(t *testing.T) {
	var r recorder
	wait.For(&r, 20*time.Millisecond, "the impossible", func() bool { return false })
	if !strings.Contains(r.failed, "the impossible did not happen within 20ms") {
		t.Fatalf("failure %q", r.failed)
	}
}
