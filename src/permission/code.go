package permission

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math/big"
)

// codeDigits: six digits are easy to read aloud and type, and with MaxCodeAttempts guesses per code and
// maxStrikes codes per session and category, a guessing model succeeds with odds of about 1 in 66,000.
const codeDigits = 6

// MaxCodeAttempts is how many wrong codes a pending request survives; the next wrong one cancels it and
// a new request (new code, new notification) must be made.
const MaxCodeAttempts = 5

// maxStrikes is how many requests may be cancelled by wrong codes before the category is denied for the
// session, so guessing cannot go on by simply asking again.
const maxStrikes = 3

var codeSpace = big.NewInt(1_000_000)

func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, codeSpace)
	if err != nil {
		return "", fmt.Errorf("permission: generate one-time code: %w", err)
	}
	return fmt.Sprintf("%0*d", codeDigits, n.Int64()), nil
}

func newRequestID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("permission: generate request id: %w", err)
	}
	return "req_" + hex.EncodeToString(b[:]), nil
}

// normalizeCode keeps the digits a user might relay with spaces or dashes ("482 913", "482-913") and
// returns "" for anything that is not exactly a code's worth of digits.
func normalizeCode(s string) string {
	if len(s) > 4*codeDigits {
		return "" // no honest code is this long; do not spend time on it
	}
	var out [codeDigits]byte
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if n == codeDigits {
				return ""
			}
			out[n] = c
			n++
		case c == ' ' || c == '-' || c == '\t':
		default:
			return ""
		}
	}
	if n != codeDigits {
		return ""
	}
	return string(out[:])
}

// codeMatches compares in constant time so response timing says nothing about how many digits were right.
func codeMatches(want, got string) bool {
	g := normalizeCode(got)
	if g == "" || len(want) != codeDigits {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(g)) == 1
}
