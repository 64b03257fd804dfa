package recorder

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// crockford is the ULID alphabet (Crockford base32, no I L O U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ulidBytes builds the 16 raw bytes of a ULID: 48-bit millisecond time then
// 80 bits of entropy. HA stores context ids this way (context_id_bin).
func ulidBytes(t time.Time, entropy [10]byte) []byte {
	b := make([]byte, 16)
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	copy(b[6:], entropy[:])
	return b
}

// ulidString renders 16 ULID bytes as the 26-character text HA shows.
func ulidString(b []byte) string {
	if len(b) != 16 {
		return ""
	}
	var out [26]byte
	// 128 bits are written as 130 bits (two leading zero bits), 5 bits a char.
	var acc uint64
	bits := 2
	idx := 0
	for _, c := range b {
		acc = acc<<8 | uint64(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out[idx] = crockford[(acc>>uint(bits))&31]
			idx++
		}
	}
	return string(out[:])
}

// parseULID decodes the 26-character text form.
func parseULID(s string) ([]byte, error) {
	if len(s) != 26 {
		return nil, fmt.Errorf("want 26 characters, got %d", len(s))
	}
	if s[0] > '7' {
		return nil, fmt.Errorf("first character %q overflows 128 bits", s[0])
	}
	out := make([]byte, 0, 16)
	var acc uint64
	bits := -2 // the first two bits of the 130-bit text are padding
	for i := 0; i < len(s); i++ {
		v := strings.IndexByte(crockford, upper(s[i]))
		if v < 0 {
			return nil, fmt.Errorf("character %q at %d is not Crockford base32", s[i], i)
		}
		acc = acc<<5 | uint64(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>uint(bits)))
		}
	}
	return out, nil
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// contextIDBytes converts a context id as HA does: a ULID, or a legacy
// 32-hex-digit UUID, both stored as 16 bytes.
func contextIDBytes(id string) ([]byte, error) {
	if len(id) == 32 {
		if b, err := hex.DecodeString(id); err == nil {
			return b, nil
		}
	}
	b, err := parseULID(id)
	if err != nil {
		return nil, fmt.Errorf("context id %q is not a ULID (26 Crockford base32 characters, e.g. 01HQ3Z8E6X6Q0F1V1Z8N4JQ2KD): %v", id, err)
	}
	return b, nil
}

// fnv1a32 is the hash HA stores next to shared_attrs / shared_data.
func fnv1a32(b []byte) int64 {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return int64(h)
}

// compactJSON encodes like HA's orjson-based json_bytes: no spaces, UTF-8
// left as is, no HTML escaping. Go maps encode with sorted keys.
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// validEntityID applies HA's rule: lowercase letters, digits and
// underscores, one dot, no leading/trailing underscore on either part, no
// double underscore in the domain.
func validEntityID(id string) bool {
	dot := strings.IndexByte(id, '.')
	if dot <= 0 || dot == len(id)-1 || strings.IndexByte(id[dot+1:], '.') >= 0 {
		return false
	}
	domain, object := id[:dot], id[dot+1:]
	if strings.Contains(domain, "__") {
		return false
	}
	for _, part := range []string{domain, object} {
		if part[0] == '_' || part[len(part)-1] == '_' {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return len(id) <= 255
}

func domainOf(entityID string) string {
	if i := strings.IndexByte(entityID, '.'); i > 0 {
		return entityID[:i]
	}
	return ""
}

// toTS converts to the REAL epoch seconds HA stores, at microsecond precision.
func toTS(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// fromTS converts a stored epoch float back, rounding to the microsecond.
func fromTS(ts float64) time.Time {
	return time.UnixMicro(int64(math.Round(ts * 1e6))).UTC()
}

// sqliteDatetime is how SQLAlchemy writes DATETIME columns on SQLite.
func sqliteDatetime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.000000")
}
