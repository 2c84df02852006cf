//go:build nodemo

package main

import (
	"context"
	"errors"
	"io"
)

// runDemo says that the release build has no demo: its stand-ins (miniredis, kfake, the Slack
// fake) are left out of the binary.
func runDemo(context.Context, []string, func(string) string, io.Writer, io.Writer) error {
	return &exitError{code: 2, err: errors.New("this build has no demo (built with -tags nodemo); run `go run . demo` in the source tree")}
}
