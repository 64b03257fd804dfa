//go:build race

package oauth

// floodSize under the race detector, which makes the pure-Go SQLite about ten times slower: still
// fifteen times the per-address quota, so the displacement is the same, at a fraction of the time.
const floodSize = 300
