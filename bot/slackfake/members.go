package slackfake

import (
	"slices"
	"strconv"
)

// SetMembers sets the users of a channel, for users.conversations; from then on the fake
// models membership (channels never set have no members).
func (s *Server) SetMembers(channel string, users []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.members == nil {
		s.members = map[string][]string{}
	}
	s.members[channel] = slices.Clone(users)
	s.notifyLocked()
}

// userConversationsLocked answers users.conversations: the channels the user is a member of,
// as channel objects with id and name, paged by limit (default 100, at most 999) with an
// opaque cursor, as Slack does.
func (s *Server) userConversationsLocked(p map[string]string) answer {
	user := p["user"]
	if user == "" {
		return errAnswer("user_not_found")
	}
	var ids []string
	switch {
	case s.members != nil:
		for ch, users := range s.members {
			if slices.Contains(users, user) {
				ids = append(ids, ch)
			}
		}
	case s.opts.Channels != nil:
		for ch := range s.opts.Channels {
			ids = append(ids, ch)
		}
	default:
		for ch := range s.channels {
			ids = append(ids, ch)
		}
	}
	slices.Sort(ids)
	limit := 100
	if n, err := strconv.Atoi(p["limit"]); err == nil && n > 0 {
		limit = min(n, 999)
	}
	start := 0
	if c := p["cursor"]; c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 || n > len(ids) {
			return errAnswer("invalid_cursor")
		}
		start = n
	}
	end := min(start+limit, len(ids))
	chans := make([]map[string]any, 0, end-start)
	for _, id := range ids[start:end] {
		chans = append(chans, map[string]any{"id": id, "name": s.channelNameLocked(id), "is_channel": id[0] == 'C',
			"is_private": id[0] == 'G', "is_member": true})
	}
	next := ""
	if end < len(ids) {
		next = strconv.Itoa(end)
	}
	return okAnswer(map[string]any{"channels": chans, "response_metadata": map[string]any{"next_cursor": next}})
}
