package state

// SetBeforeRun installs a function called before each shared script run of RecordAlerts.
func (s *Store) SetBeforeRun(f func()) {
	s.commit.mu.Lock()
	s.commit.beforeRun = f
	s.commit.mu.Unlock()
}

// Queued is how many RecordAlerts calls wait for the next run.
func (s *Store) Queued() int {
	s.commit.mu.Lock()
	defer s.commit.mu.Unlock()
	return len(s.commit.queue)
}
