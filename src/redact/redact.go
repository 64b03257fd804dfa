// Package redact hides secrets — lock and alarm codes, PINs, passwords, Wi-Fi keys and tokens —
// in what the model can read: decoded JSON (Home Assistant attributes and event data), hub
// attribute values as raw JSON (a Hubitat lockCodes map, often a JSON object inside a JSON
// string), the arguments of device commands, and free text (log lines, errors).
//
// A secret is recognised by the name it is stored under, never by its shape: "1234" is a code
// under "code" and a brightness under "level". Everything that names or counts a secret (a lock
// slot's number, the name of the person it belongs to) stays, so the model can still say who has
// a code; only the value that opens something becomes Hidden.
package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Hidden replaces a secret.
const Hidden = "[hidden]"

// secretKeys are the names, normalised (see norm), under which a value is a secret.
var secretKeys = map[string]bool{
	// Lock and alarm codes: HA's code service field, Hubitat's lockCodes, Z-Wave user codes.
	"code": true, "codes": true, "lockcode": true, "lockcodes": true, "usercode": true, "usercodes": true,
	"pin": true, "pins": true, "pincode": true, "passcode": true, "alarmcode": true, "disarmcode": true,
	"armcode": true, "keypadcode": true, "accesscode": true,
	// Passwords and Wi-Fi keys.
	"password": true, "passwd": true, "psk": true, "wpapsk": true, "wpakey": true, "wifikey": true,
	"wifipassword": true, "wifipsk": true, "networkkey": true, "s0key": true, "s2key": true,
	// Tokens and keys of services.
	"token": true, "accesstoken": true, "refreshtoken": true, "authtoken": true, "bearertoken": true,
	"apikey": true, "apitoken": true, "secret": true, "clientsecret": true, "privatekey": true,
}

// labelKeys are kept inside a secret value: they name a code's owner, not the code.
var labelKeys = map[string]bool{"name": true, "label": true}

// norm folds the spellings of one name together: lockCodes, lock_codes, Lock-Codes.
func norm(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c == '_' || c == '-' || c == ' ' || c == '.':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Key reports whether a value stored under name (a JSON key, an attribute's or an event's
// name) is a secret.
func Key(name string) bool { return secretKeys[norm(name)] }

// Value returns v, a decoded JSON value (maps, slices, strings, numbers, booleans, nil), with
// every secret hidden. v itself is never modified; a part that holds no secret may be shared.
func Value(v any) any {
	out, _ := walk(v)
	return out
}

// Map is Value for an object such as a state's attributes or an event's data.
func Map(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out, _ := walkMap(m)
	return out
}

func walk(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return walkMap(x)
	case []any:
		var out []any
		for i, e := range x {
			r, changed := walk(e)
			if changed && out == nil {
				out = append(make([]any, 0, len(x)), x[:i]...)
			}
			if out != nil {
				out = append(out, r)
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case string:
		return walkString(x)
	}
	return v, false
}

func walkMap(m map[string]any) (map[string]any, bool) {
	var out map[string]any
	for k, e := range m {
		var r any
		var changed bool
		if Key(k) {
			r, changed = hide(e), true
		} else {
			r, changed = walk(e)
		}
		if changed && out == nil {
			out = make(map[string]any, len(m))
			for k2, e2 := range m {
				out[k2] = e2
			}
		}
		if out != nil {
			out[k] = r
		}
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// walkString looks inside a string that holds JSON (hubs and integrations put objects in
// attributes as text) and hides secret-shaped URL parameters (a camera's ?token=).
func walkString(s string) (any, bool) {
	if inner, ok := jsonText(s); ok {
		if r, changed := walk(inner); changed {
			b, err := json.Marshal(r)
			if err != nil {
				return Hidden, true
			}
			return string(b), true
		}
		return s, false
	}
	if t := hideQueryParams(s); t != s {
		return t, true
	}
	return s, false
}

// jsonText decodes s when it is a JSON object or array written as text.
func jsonText(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	d := json.NewDecoder(strings.NewReader(t))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

// hide is what a value under a secret name becomes: its shape stays (the slots of a lockCodes
// map, their owners' names) and every other value is Hidden. null and "" say there is no
// secret and stay.
func hide(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && labelKeys[norm(k)] {
				out[k] = s
				continue
			}
			out[k] = hide(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = hide(e)
		}
		return out
	case string:
		if x == "" {
			return ""
		}
		if inner, ok := jsonText(x); ok {
			if b, err := json.Marshal(hide(inner)); err == nil {
				return string(b)
			}
		}
	}
	return Hidden
}

// Attribute returns a device attribute's (or an event's) raw JSON value as the model may see
// it: the value of a secret attribute hidden (a lockCodes map keeps its slots and names), and
// secrets inside any other JSON value hidden too. Anything that is not JSON is Hidden when the
// name is secret and kept otherwise.
func Attribute(name string, raw []byte) []byte {
	t := bytes.TrimSpace(raw)
	secret := Key(name)
	if !secret && !mayHold(t) {
		return raw
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		if secret && len(t) > 0 {
			return []byte(`"` + Hidden + `"`)
		}
		return raw
	}
	var out any
	if secret {
		out = hide(v)
	} else {
		var changed bool
		if out, changed = walk(v); !changed {
			return raw
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return []byte(`"` + Hidden + `"`)
	}
	return b
}

// mayHold is the cheap test that a value under a harmless name may still hide a secret: an
// object, an array, or a string with one in it or a URL parameter.
func mayHold(t []byte) bool {
	if len(t) == 0 {
		return false
	}
	switch t[0] {
	case '{', '[':
		return true
	case '"':
		return bytes.ContainsAny(t, "{[=")
	}
	return false
}

// codeArgsKept are the lock-code commands whose other arguments are not secrets: Hubitat's
// LockCodes capability, setCode(position, code, name) keeps the position and the name;
// deleteCode(position), getCodes() and setCodeLength(length) take no secret.
var codeArgsKept = map[string][]int{"setcode": {0, 2}, "deletecode": nil, "getcodes": nil, "setcodelength": nil}

// Arg reports whether argument i of command is a secret. The lock-code commands above hide
// only the code; any other command whose name speaks of a code, PIN, password, token or key
// (setCodes, setUserCode, setPin, setWifiPassword) and the keypad and lock commands, which take
// a code on some drivers, have every argument hidden.
func Arg(command string, i int) bool {
	c := norm(command)
	if keep, known := codeArgsKept[c]; known {
		return c == "setcode" && !slices.Contains(keep, i)
	}
	switch c {
	case "disarm", "arm", "armaway", "armhome", "armnight", "armstay", "lock", "unlock", "unlockwithcode", "unlockwithtimeout":
		return true
	}
	for _, w := range []string{"code", "pin", "password", "passwd", "token", "secret", "psk", "key"} {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

// Args returns args with every secret one Hidden (a new slice; args is not changed).
func Args(command string, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if Arg(command, i) && a != "" {
			a = Hidden
		}
		out[i] = a
	}
	return out
}

// keyPattern matches any secret name as it is written in text: each letter of a normalised
// name may be followed by a separator (lock_codes, access-token).
func keyPattern() string {
	names := make([]string, 0, len(secretKeys))
	for k := range secretKeys {
		var b strings.Builder
		for i := 0; i < len(k); i++ {
			if i > 0 {
				b.WriteString(`[_ .-]?`)
			}
			b.WriteString(regexp.QuoteMeta(k[i : i+1]))
		}
		names = append(names, b.String())
	}
	// Longest first, so that "codes" wins over "code" at the same place.
	sortByLenDesc(names)
	return `(?:` + strings.Join(names, "|") + `)`
}

func sortByLenDesc(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && (len(s[j]) > len(s[j-1]) || len(s[j]) == len(s[j-1]) && s[j] < s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// The patterns are compiled on first use, not at start: the secret names make them large (about
// half a megabyte compiled), and an add-on nobody has called yet should not hold them.
var (
	// queryParam is a URL parameter with a secret name: ?token=…, &code=….
	queryParam = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([?&]` + keyPattern() + `=)[^&#\s"'<>]+`)
	})
	// assignment is a secret written as name=value, name: value or "name": value, the value
	// quoted (a JSON string, escapes and all) or a bare word.
	assignment = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(\b` + keyPattern() + `\\?"?\s*[:=]\s*)(\\"(?:[^"\\]|\\\\)*\\"|"(?:[^"\\]|\\.)*"|[^\s,;&"'{}()\\]+)`)
	})
)

// hideQueryParams is queryParam's replacement, skipped for the many strings (states, names,
// attribute values) that hold no "?" or "&" and "=", which it cannot match.
func hideQueryParams(s string) string {
	if !strings.ContainsAny(s, "?&") || !strings.Contains(s, "=") {
		return s
	}
	return queryParam().ReplaceAllString(s, "${1}"+Hidden)
}

// Text hides the secrets written into free text: a "code":"1234" or a "lockCodes":"{…}"
// that a JSON value left behind, code=1234 in a log line, ?token=… in a URL.
func Text(s string) string {
	s = hideQueryParams(s)
	if !strings.ContainsAny(s, ":=") {
		return s // no name=value or name: value to hide
	}
	assignment := assignment()
	return assignment.ReplaceAllStringFunc(s, func(m string) string {
		sub := assignment.FindStringSubmatch(m)
		if sub == nil {
			return m
		}
		v := sub[2]
		if strings.HasPrefix(v, Hidden[:len(Hidden)-1]) {
			return m // already hidden (by queryParam above)
		}
		if strings.HasPrefix(v, `\"`) {
			return sub[1] + `\"` + Hidden + `\"`
		}
		if strings.HasPrefix(v, `"`) {
			return sub[1] + `"` + Hidden + `"`
		}
		return sub[1] + Hidden
	})
}
