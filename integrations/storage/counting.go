package storage

import "io"

// CountingReader counts the bytes read through it: what a store's Write took from its source
// (remediate's copies), how much of a log file a scan read (driverlog).
type CountingReader struct {
	R io.Reader
	N int64 // bytes read so far
}

// Read reads from R and counts what it read.
func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
