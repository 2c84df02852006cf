package state

import (
	"fmt"
	"strconv"
)

// Every script returns named results (lib.lua's result, or rows built alike): the number of
// columns, their names, then the values row by row. This file decodes them, in one place.

// rows are a script's named results.
type rows struct {
	col  map[string]int
	n    int // columns
	vals []any
}

func decodeRows(script string, v any) (rows, error) {
	a, ok := v.([]any)
	if !ok || len(a) < 1 {
		return rows{}, fmt.Errorf("script%s: unexpected answer %v", script, v)
	}
	n, ok := a[0].(int64)
	if !ok || n < 1 || int64(len(a)) < 1+n || (int64(len(a))-1-n)%n != 0 {
		return rows{}, fmt.Errorf("script%s: unexpected answer of %d values", script, len(a))
	}
	r := rows{col: make(map[string]int, n), n: int(n), vals: a[1+n:]}
	for i := range int(n) {
		name, _ := a[1+i].(string)
		r.col[name] = i
	}
	return r, nil
}

// len is the number of rows.
func (r rows) len() int { return len(r.vals) / r.n }

// has says whether the results have a column.
func (r rows) has(col string) bool { _, ok := r.col[col]; return ok }

// str is row i's value of col ("" when absent).
func (r rows) str(i int, col string) string {
	c, ok := r.col[col]
	if !ok || i >= r.len() {
		return ""
	}
	switch v := r.vals[i*r.n+c].(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// int is row i's value of col as a number (0 when absent).
func (r rows) int(i int, col string) int64 {
	n, _ := strconv.ParseInt(r.str(i, col), 10, 64)
	return n
}

// column is every row's value of col.
func (r rows) column(col string) []string {
	out := make([]string, r.len())
	for i := range out {
		out[i] = r.str(i, col)
	}
	return out
}

// one decodes a script's answer (a Cmd's Result).
func (s *Store) one(v any, err error) (rows, error) {
	if err != nil {
		return rows{}, err
	}
	return decodeRows("", v)
}
