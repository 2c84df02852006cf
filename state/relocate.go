package state

import "context"

// Relocate records that the incident's root message is now ts in channel: the root posted
// again after a person deleted it, or in slack.default_channel after its channel was archived
// or the bot removed from it. The thread continues there; buttons on the new root find the
// incident, and incident list in that channel lists it (the old channel's no longer does). It
// is a no-op for an incident that no longer exists.
func (s *Store) Relocate(ctx context.Context, id, channel, ts string) error {
	id = NormalizeID(id)
	err := s.run(ctx, relocateScript, []string{s.base}, id, ts, channel).Err()
	return wrap("relocate incident "+id, err)
}
