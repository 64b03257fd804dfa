package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// Every secret hamcp hands out carries a prefix saying what it is, so the verifier chain can tell
// hamcp's access tokens from Home Assistant's and secret scanners can recognise leaked ones.
const (
	accessPrefix       = "hamcp_at_"
	refreshPrefix      = "hamcp_rt_"
	codePrefix         = "hamcp_ac_"
	clientSecretPrefix = "hamcp_cs_"
)

// newSecret is prefix + 256 random bits, base64url.
func newSecret(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it aborts the program instead)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// hashSecret is what the store keeps instead of a secret: its SHA-256, hex. The secrets carry 256
// random bits, so a fast unsalted hash is enough; nothing here is a low-entropy password.
func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
