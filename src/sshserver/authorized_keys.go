package sshserver

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unicode"

	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/src/authn"
)

// AuthorizedKey is one usable line of authorized_keys.
type AuthorizedKey struct {
	Line        int // 1-based line in the text it came from
	Key         ssh.PublicKey
	Comment     string
	Fingerprint string // SHA256:…, the only form of the key that is ever logged
	// Expires is when expiry-time="…" stops the key working; zero means never.
	Expires time.Time
	// NoTouchRequired lets a FIDO (sk-) key sign without a touch, as OpenSSH's option does.
	NoTouchRequired bool
	from            fromPatterns
}

// Principal is the caller who logged in with the key.
func (k *AuthorizedKey) Principal() *authn.Principal {
	return &authn.Principal{Kind: authn.KindSSH, KeyFingerprint: k.Fingerprint, KeyComment: k.Comment}
}

// allows reports why the key may not log in from addr at now, or nil.
func (k *AuthorizedKey) allows(addr net.Addr, now time.Time) error {
	if !k.Expires.IsZero() && !now.Before(k.Expires) {
		return fmt.Errorf("key on authorized_keys line %d expired at %s", k.Line, k.Expires.UTC().Format(time.RFC3339))
	}
	if k.from != nil && !k.from.allows(addr) {
		return fmt.Errorf("key on authorized_keys line %d is not allowed from %s (from= option)", k.Line, addr)
	}
	return nil
}

// keyFormatHint is appended to line errors so the user knows what a good line looks like.
const keyFormatHint = `each line must be an OpenSSH public key such as "ssh-ed25519 AAAAC3Nz… you@laptop" (the contents of a .pub file), optionally preceded by options like restrict or from="192.168.1.0/24"`

// ParseAuthorizedKeys reads OpenSSH authorized_keys text. Blank lines and lines starting with #
// are skipped. Errors name the line and never quote it, since people sometimes paste private keys.
//
// Options: restrict, no-pty, no-port-forwarding, no-agent-forwarding, no-X11-forwarding,
// no-user-rc and command="…" are accepted because hamcp enforces all of them anyway (every session
// is an MCP session whatever the command); from="…" and expiry-time="…" are enforced;
// no-touch-required is honoured for FIDO keys. Options that would grant something hamcp never
// allows (pty, port-forwarding, permitopen, environment, …), certificate options and unknown
// options are refused with an error, rather than silently ignored.
func ParseAuthorizedKeys(text string) ([]AuthorizedKey, error) {
	var keys []AuthorizedKey
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.Contains(line, "PRIVATE KEY") {
			return nil, fmt.Errorf("authorized_keys line %d: looks like a private key; paste the public key (the .pub file) instead, and treat that private key as exposed", n)
		}
		pub, comment, opts, rest, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("authorized_keys line %d: not a valid public key (%s); %s", n, parseReason(err), keyFormatHint)
		}
		if len(rest) != 0 {
			return nil, fmt.Errorf("authorized_keys line %d: unexpected text after the key", n)
		}
		if _, isCert := pub.(*ssh.Certificate); isCert {
			return nil, fmt.Errorf("authorized_keys line %d: is an SSH certificate; hamcp does not accept certificates, list the plain public key instead", n)
		}
		k := AuthorizedKey{Line: n, Key: pub, Comment: cleanComment(comment), Fingerprint: ssh.FingerprintSHA256(pub)}
		for _, o := range opts {
			if err := k.applyOption(o); err != nil {
				return nil, fmt.Errorf("authorized_keys line %d: %w", n, err)
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// parseReason turns x/crypto's "no key found; last parsing error for ignored line: X" into X.
func parseReason(err error) string {
	if inner := errors.Unwrap(err); inner != nil {
		err = inner
	}
	return strings.TrimPrefix(err.Error(), "ssh: ")
}

// cleanComment keeps comments printable and short: they end up in logs and the audit trail.
func cleanComment(c string) string {
	c = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, c)
	if r := []rune(c); len(r) > 64 {
		c = string(r[:64])
	}
	return strings.TrimSpace(c)
}

// Options hamcp already enforces for every key; accepting them changes nothing.
var enforcedOptions = map[string]bool{
	"restrict": true, "no-pty": true, "no-port-forwarding": true, "no-agent-forwarding": true,
	"no-x11-forwarding": true, "no-user-rc": true, "command": true,
}

// Options that would loosen something. hamcp never allows these, so a key asking for them is a
// misunderstanding worth reporting rather than ignoring.
var grantingOptions = map[string]string{
	"pty": "a terminal", "port-forwarding": "port forwarding", "agent-forwarding": "agent forwarding",
	"x11-forwarding": "X11 forwarding", "user-rc": "~/.ssh/rc", "permitopen": "port forwarding",
	"permitlisten": "remote port forwarding", "tunnel": "tun device forwarding",
	"environment": "setting environment variables",
}

// Options written name="value"; every other known option is a bare word.
var valueOptions = map[string]bool{
	"command": true, "from": true, "expiry-time": true, "permitopen": true, "permitlisten": true,
	"tunnel": true, "environment": true, "principals": true,
}

var flagOptions = map[string]bool{
	"restrict": true, "no-pty": true, "no-port-forwarding": true, "no-agent-forwarding": true,
	"no-x11-forwarding": true, "no-user-rc": true, "no-touch-required": true, "verify-required": true,
	"cert-authority": true, "pty": true, "port-forwarding": true, "agent-forwarding": true,
	"x11-forwarding": true, "user-rc": true,
}

const acceptedOptionList = "restrict, no-pty, no-port-forwarding, no-agent-forwarding, no-X11-forwarding, no-user-rc, command=, from=, expiry-time=, no-touch-required"

func (k *AuthorizedKey) applyOption(opt string) error {
	name, value, hasValue := strings.Cut(opt, "=")
	lname := strings.ToLower(name) // OpenSSH matches option names case-insensitively
	switch {
	case !valueOptions[lname] && !flagOptions[lname]:
		return fmt.Errorf("unknown option %s; hamcp accepts %s", shortQuote(name), acceptedOptionList)
	case valueOptions[lname] && !hasValue:
		return fmt.Errorf("option %s needs a quoted value, e.g. %s=\"…\"", name, name)
	case flagOptions[lname] && hasValue:
		return fmt.Errorf("option %s takes no value; write just %s", name, name)
	}
	if hasValue {
		v, err := dequote(value)
		if err != nil {
			return fmt.Errorf("option %s: %w", name, err)
		}
		value = v
	}
	switch lname {
	case "from":
		p, err := parseFromPatterns(value)
		if err != nil {
			return fmt.Errorf(`option from="…": %w`, err)
		}
		k.from = p
		return nil
	case "expiry-time":
		t, err := parseExpiry(value, time.Local)
		if err != nil {
			return fmt.Errorf(`option expiry-time="…": %w`, err)
		}
		k.Expires = t
		return nil
	case "no-touch-required":
		k.NoTouchRequired = true
		return nil
	case "verify-required":
		return errors.New("option verify-required is not supported (hamcp cannot check FIDO user verification); remove it")
	case "cert-authority", "principals":
		return fmt.Errorf("option %s is for SSH certificates, which hamcp does not accept; list each user's public key instead", name)
	}
	if what, ok := grantingOptions[lname]; ok {
		return fmt.Errorf("option %s asks to allow %s, which hamcp's SSH server never allows (it only serves MCP); remove the option", name, what)
	}
	if enforcedOptions[lname] {
		return nil
	}
	return fmt.Errorf("unknown option %s; hamcp accepts %s", shortQuote(name), acceptedOptionList)
}

// dequote undoes OpenSSH option quoting: the value is wrapped in double quotes and \" stands for
// a quote inside it.
func dequote(v string) (string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", errors.New(`the value must be in double quotes, e.g. from="192.168.1.0/24"`)
	}
	inner := v[1 : len(v)-1]
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c == '\\' && i+1 < len(inner) && inner[i+1] == '"' {
			b.WriteByte('"')
			i++
			continue
		}
		if c == '"' {
			return "", errors.New(`unescaped " inside the quoted value; write \" for a quote`)
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// shortQuote quotes an option name for an error without letting a pasted blob flood the message.
func shortQuote(s string) string { return fmt.Sprintf("%q", truncate(s, 32)) }

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// parseExpiry reads OpenSSH's YYYYMMDD[HHMM[SS]][Z] time: local time unless it ends in Z.
func parseExpiry(v string, loc *time.Location) (time.Time, error) {
	s := v
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		s, loc = s[:len(s)-1], time.UTC
	}
	layouts := map[int]string{8: "20060102", 12: "200601021504", 14: "20060102150405"}
	layout, ok := layouts[len(s)]
	if !ok {
		return time.Time{}, errors.New(`use YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, with a trailing Z for UTC, e.g. expiry-time="20301231"`)
	}
	t, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf(`%q is not a valid date or time; use YYYYMMDD[HHMM[SS]][Z], e.g. expiry-time="20301231"`, v)
	}
	return t, nil
}
