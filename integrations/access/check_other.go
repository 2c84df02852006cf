//go:build !linux

package access

import "os"

// Check cannot judge access off Linux: the report says so.
func Check(dir string, u User) Report {
	return Report{Location: dir, User: u, Err: ErrUnsupported.Error()}
}

// Self is the calling process's own user, as far as the platform tells.
func Self() User {
	return User{UID: os.Geteuid(), GIDs: []int{os.Getegid()}, Whose: "streamwatch's own"}
}
