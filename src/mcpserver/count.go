package mcpserver

// OpenSessions counts the sessions open now on every transport (the panel's Status page).
// Sessionless single POSTs hold no session and are not counted.
func (b *Builder) OpenSessions() int {
	b.sess.mu.Lock()
	defer b.sess.mu.Unlock()
	return len(b.sess.live)
}
