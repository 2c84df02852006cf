package config

import (
	"fmt"
	"strings"
)

// FieldError is one problem in the configuration, named by where it is: a YAML path such as
// "pipelines[1].channel", or an environment variable name for secrets.
type FieldError struct {
	// Path is empty when the problem concerns the whole document (for example invalid YAML).
	Path string
	Msg  string
	// Line is the 1-based line in the YAML document, or 0 when there is none.
	Line int
}

// Error formats the problem as "path: message (line N)".
func (e FieldError) Error() string {
	s := e.Msg
	if e.Path != "" {
		s = e.Path + ": " + s
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d)", e.Line)
	}
	return s
}

// Errors is every problem found in a configuration, in the order found.
type Errors []FieldError

// Error lists the problems one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns each problem as an error, so errors.As finds a FieldError.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// Has reports whether a problem at path has exactly the message msg; tests and callers that
// react to a specific problem use it.
func (es Errors) Has(path, msg string) bool {
	for _, e := range es {
		if e.Path == path && e.Msg == msg {
			return true
		}
	}
	return false
}
