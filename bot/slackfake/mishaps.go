package slackfake

// What people do to a workspace behind the bot's back: delete a message, archive a channel,
// remove the bot from a channel. The Web API then answers as Slack does.

// DeleteMessage deletes the message ts of channel, as a person's chat.delete does. A root
// with replies stays as a tombstone ("This message was deleted.", no blocks): its thread
// still takes replies, but chat.update on it answers message_not_found, as on Slack. Any
// other message is gone: a thread_ts naming it gets thread_not_found. It reports whether the
// message existed.
func (s *Server) DeleteMessage(channel, ts string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := s.channels[channel]
	for i, m := range msgs {
		if m.TS != ts || m.Deleted {
			continue
		}
		replies := false
		for _, r := range msgs {
			if r.ThreadTS == ts {
				replies = true
				break
			}
		}
		if replies {
			m.Deleted, m.Text, m.Blocks, m.Mentions = true, "This message was deleted.", nil, nil
		} else {
			s.channels[channel] = append(msgs[:i:i], msgs[i+1:]...)
		}
		s.notifyLocked()
		return true
	}
	return false
}

// ArchiveChannel archives channel: from then on chat.postMessage, chat.update and
// chat.postEphemeral there answer is_archived.
func (s *Server) ArchiveChannel(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.archived == nil {
		s.archived = map[string]bool{}
	}
	s.archived[channel] = true
	s.notifyLocked()
}

// RemoveBot takes the bot out of channel (conversations.kick, or /remove): from then on
// chat.postMessage, chat.update and chat.postEphemeral there answer not_in_channel.
func (s *Server) RemoveBot(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed == nil {
		s.removed = map[string]bool{}
	}
	s.removed[channel] = true
	s.notifyLocked()
}

// writableLocked is the answer for a write to channel: channel_not_found, is_archived,
// not_in_channel, or none (status 0).
func (s *Server) writableLocked(ch string) answer {
	switch {
	case !s.channelExistsLocked(ch):
		return errAnswer("channel_not_found")
	case s.archived[ch]:
		return errAnswer("is_archived")
	case s.removed[ch]:
		return errAnswer("not_in_channel")
	}
	return answer{}
}
