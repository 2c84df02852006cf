package state

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// relocateScript moves an incident's root message: root_ts and root_channel name the new one,
// the new message's lookup key (P:ts:<channel>:<ts>) finds the incident with the incident's
// own expiry, and the old message's lookup key goes. An incident that expired meanwhile is
// left alone, as complete.lua does. KEYS: the incident, the new lookup key, the old one ("" when
// none); ARGV: incident id, ts, channel.
var relocateScript = redis.NewScript(`
local ttl = redis.call("PTTL", KEYS[1])
if ttl == -2 then return 0 end
redis.call("HSET", KEYS[1], "root_ts", ARGV[2], "root_channel", ARGV[3])
if ttl > 0 then
  redis.call("SET", KEYS[2], ARGV[1], "PX", ttl)
else
  redis.call("SET", KEYS[2], ARGV[1])
end
if KEYS[3] ~= KEYS[2] and redis.call("GET", KEYS[3]) == ARGV[1] then redis.call("DEL", KEYS[3]) end
return 1
`)

// Relocate records that the incident's root message is now ts in channel: the root posted
// again after a person deleted it, or in slack.default_channel after its channel was archived
// or the bot removed from it. The thread continues there; buttons on the new root find the
// incident. It is a no-op for an incident that no longer exists.
func (s *Store) Relocate(ctx context.Context, id, channel, ts string) error {
	id = NormalizeID(id)
	old, err := s.rdb.HMGet(ctx, s.key("inc", id), "root_channel", "root_ts").Result()
	if err != nil {
		return wrap("relocate incident "+id, err)
	}
	oldKey := s.key("ts", "-", "-")
	if ch, ok := old[0].(string); ok {
		if ots, ok := old[1].(string); ok && ots != "" {
			oldKey = s.key("ts", ch, ots)
		}
	}
	err = relocateScript.Run(ctx, s.rdb, []string{s.key("inc", id), s.key("ts", channel, ts), oldKey}, id, ts, channel).Err()
	return wrap("relocate incident "+id, err)
}
