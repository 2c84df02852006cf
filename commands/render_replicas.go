package commands

import (
	"errors"

	"github.com/streamwatch/streamwatch/state"
)

// notYetSafe is the section a reply gets when Redis's replicas did not confirm what the
// command changed (err from Replication.Mark or Confirm): why, and what to do.
func notYetSafe(err error) Section {
	why := "Redis did not say whether its replicas have this change (" + err.Error() + ")."
	if errors.Is(err, state.ErrNotReplicated) {
		why = "Redis has this change, but " + err.Error() + "."
	}
	return Section{Title: "Not yet safe", Lines: []string{why,
		"If the Redis primary fails before they have it, the change may be lost: check it in a minute, and repeat it if it is gone."}}
}
