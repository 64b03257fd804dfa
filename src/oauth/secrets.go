package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
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

// The successor of a rotated refresh token is kept for refreshGrace so a client that sends the old
// token again (two concurrent refreshes, or a retry after a lost answer) gets the same pair. It is
// sealed with AES-GCM under a key derived from the old token itself: the store holds only that
// token's SHA-256, from which the key cannot be derived, so a copy of the database yields no
// usable token.
func graceKey(oldToken string) []byte {
	k := sha256.Sum256([]byte("hamcp refresh grace\x00" + oldToken))
	return k[:]
}

func sealSuccessor(oldToken string, plain []byte) (string, error) {
	aead, err := newGCM(graceKey(oldToken))
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, plain, []byte(hashSecret(oldToken)))
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

func openSuccessor(oldToken, sealed string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return nil, err
	}
	aead, err := newGCM(graceKey(oldToken))
	if err != nil {
		return nil, err
	}
	if len(raw) < aead.NonceSize() {
		return nil, errors.New("sealed successor too short")
	}
	return aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(hashSecret(oldToken)))
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
