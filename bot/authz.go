package bot

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Remediators implements commands.Authorizer over slack.remediators: user ids (U…, W…) and
// user-group ids (S…), whose members are read through usergroups.users.list and cached.
type Remediators struct {
	api    *slack.Client
	users  map[string]bool
	groups []string
	ttl    time.Duration

	mu      sync.Mutex
	members map[string]bool
	fetched time.Time
}

// NewRemediators returns an authorizer for ids; an empty list lets nobody remediate.
func NewRemediators(api *slack.Client, ids []string) *Remediators {
	r := &Remediators{api: api, users: map[string]bool{}, ttl: 5 * time.Minute}
	for _, id := range ids {
		if strings.HasPrefix(id, "S") {
			r.groups = append(r.groups, id)
		} else {
			r.users[id] = true
		}
	}
	return r
}

// Remediator reports whether userID is listed, directly or through a user group.
func (r *Remediators) Remediator(ctx context.Context, userID string) (bool, error) {
	if r.users[userID] {
		return true, nil
	}
	if len(r.groups) == 0 {
		return false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.members == nil || time.Since(r.fetched) > r.ttl {
		members := map[string]bool{}
		for _, g := range r.groups {
			users, err := r.api.GetUserGroupMembersContext(ctx, g)
			if err != nil {
				return false, err
			}
			for _, u := range users {
				members[u] = true
			}
		}
		r.members, r.fetched = members, time.Now()
	}
	return r.members[userID], nil
}
