//go:build !unix

package probe

// lookupOwnership is unix-only: elsewhere there are no uids and mode bits to show.
func lookupOwnership(string) *Ownership { return nil }
