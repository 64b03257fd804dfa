//go:build !race

package oauth

// floodSize is how many registrations or logins one address sends in the flood tests: the 1,000
// that locked everyone out on the old code.
const floodSize = 1000
