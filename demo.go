package main

import (
	"context"
	"errors"
	"io"
)

// runDemo is `streamwatch demo`.
func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return errors.New("demo: not built yet")
}
