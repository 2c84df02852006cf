package bot

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Remediators implements commands.Authorizer over slack.remediators and pipelines[].remediators:
// user ids (U…, W…) and user-group ids (S…), whose members are read through
// usergroups.users.list and cached.
type Remediators struct {
	api       *slack.Client
	global    []string
	pipelines map[string][]string
	ttl       time.Duration

	mu     sync.Mutex
	groups map[string]groupMembers
}

type groupMembers struct {
	users   map[string]bool
	fetched time.Time
}

// NewRemediators returns an authorizer: global remediate every pipeline, pipelines[name] that
// pipeline as well. Nobody named for a pipeline means nobody remediates it.
func NewRemediators(api *slack.Client, global []string, pipelines map[string][]string) *Remediators {
	return &Remediators{api: api, global: global, pipelines: pipelines, ttl: 5 * time.Minute, groups: map[string]groupMembers{}}
}

// Remediator reports whether userID is a remediator of pipeline ("" for slack.remediators
// alone), directly or through a user group, and whether anybody is named for it.
func (r *Remediators) Remediator(ctx context.Context, userID, pipeline string) (bool, bool, error) {
	ids := r.global
	if pipeline != "" {
		ids = slices.Concat(r.global, r.pipelines[pipeline])
	}
	if len(ids) == 0 {
		return false, false, nil
	}
	var groups []string
	for _, id := range ids {
		if strings.HasPrefix(id, "S") {
			groups = append(groups, id)
		} else if id == userID {
			return true, true, nil
		}
	}
	for _, g := range groups {
		members, err := r.members(ctx, g)
		if err != nil {
			return false, true, err
		}
		if members[userID] {
			return true, true, nil
		}
	}
	return false, true, nil
}

func (r *Remediators) members(ctx context.Context, group string) (map[string]bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.groups[group]; ok && time.Since(m.fetched) < r.ttl {
		return m.users, nil
	}
	users, err := r.api.GetUserGroupMembersContext(ctx, group)
	if err != nil {
		return nil, err
	}
	m := groupMembers{users: map[string]bool{}, fetched: time.Now()}
	for _, u := range users {
		m.users[u] = true
	}
	r.groups[group] = m
	return m.users, nil
}

// Channels implements commands.Directory through users.conversations: the public and private
// channels a user is a member of (private ones only where the bot is a member too, which is
// every channel it posts incidents in). Answers are cached for a minute.
type Channels struct {
	api *slack.Client
	ttl time.Duration

	mu    sync.Mutex
	cache map[string]userChannels
}

type userChannels struct {
	ids     map[string]bool
	fetched time.Time
}

// NewChannels returns a Directory over the Slack API.
func NewChannels(api *slack.Client) *Channels {
	return &Channels{api: api, ttl: time.Minute, cache: map[string]userChannels{}}
}

// Channels returns the channels userID is a member of.
func (c *Channels) Channels(ctx context.Context, userID string) (map[string]bool, error) {
	c.mu.Lock()
	if e, ok := c.cache[userID]; ok && time.Since(e.fetched) < c.ttl {
		c.mu.Unlock()
		return e.ids, nil
	}
	c.mu.Unlock()
	ids := map[string]bool{}
	params := &slack.GetConversationsForUserParameters{UserID: userID, Types: []string{"public_channel", "private_channel"},
		Limit: 200, ExcludeArchived: true}
	for page := 0; page < 50; page++ {
		chans, next, err := c.api.GetConversationsForUserContext(ctx, params)
		if err != nil {
			return nil, err
		}
		for _, ch := range chans {
			ids[ch.ID] = true
		}
		if next == "" {
			break
		}
		params.Cursor = next
	}
	c.mu.Lock()
	c.cache[userID] = userChannels{ids: ids, fetched: time.Now()}
	c.mu.Unlock()
	return ids, nil
}
