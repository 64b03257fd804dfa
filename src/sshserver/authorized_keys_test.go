package sshserver

import (
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/src/authn"
)

func TestParseAuthorizedKeys(t *testing.T) {
	k1 := newClientKey(t, "")
	k2 := newClientKey(t, "")
	a := strings.TrimSpace(k1.authorized)
	b := strings.TrimSpace(k2.authorized)
	fields := strings.Fields(a) // type, base64

	cases := []struct {
		name      string
		text      string
		wantLines []int    // lines of the keys returned
		wantErr   []string // all must appear in the error
	}{
		{name: "empty", text: "", wantLines: nil},
		{name: "comments and blank lines", text: "# mine\n\n   \n" + a + " me@laptop\n\t# old key below\n" + b + "\n", wantLines: []int{4, 6}},
		{name: "CRLF line ends", text: a + "\r\n" + b + "\r\n", wantLines: []int{1, 2}},
		{name: "leading spaces", text: "   " + a, wantLines: []int{1}},
		{name: "restrict and command", text: `restrict,command="hamcp stdio --x \"q\"" ` + a + " claude", wantLines: []int{1}},
		{name: "upper-case option names", text: `NO-PTY,No-Port-Forwarding ` + a, wantLines: []int{1}},
		{name: "all enforced options", text: `no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc ` + a, wantLines: []int{1}},
		{name: "from and expiry", text: `from="192.168.1.0/24,!192.168.1.9,10.0.*",expiry-time="203012312359Z" ` + a, wantLines: []int{1}},
		{name: "no-touch-required", text: `no-touch-required ` + a, wantLines: []int{1}},
		{name: "bad base64", text: a + "\n" + fields[0] + " AAAA!!notbase64 x", wantErr: []string{"line 2", "not a valid public key", "ssh-ed25519 AAAAC3Nz"}},
		{name: "truncated key", text: "\n\n" + fields[0] + " " + fields[1][:20], wantErr: []string{"line 3", "not a valid public key"}},
		{name: "type mismatch", text: "ssh-rsa " + fields[1], wantErr: []string{"line 1", "not a valid public key"}},
		{name: "just a word", text: "hello", wantErr: []string{"line 1"}},
		{name: "private key pasted", text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", wantErr: []string{"line 1", "private key", ".pub"}},
		{name: "unknown option", text: `frobnicate ` + a, wantErr: []string{"line 1", `unknown option "frobnicate"`, "restrict"}},
		{name: "granting option pty", text: `restrict,pty ` + a, wantErr: []string{"line 1", "option pty", "a terminal", "remove"}},
		{name: "permitopen", text: `permitopen="localhost:80" ` + a, wantErr: []string{"option permitopen", "port forwarding"}},
		{name: "environment", text: `environment="A=B" ` + a, wantErr: []string{"option environment", "environment variables"}},
		{name: "cert-authority", text: `cert-authority ` + a, wantErr: []string{"certificates"}},
		{name: "verify-required", text: `verify-required ` + a, wantErr: []string{"verify-required", "not supported"}},
		{name: "command without value", text: `command ` + a, wantErr: []string{"option command needs a quoted value"}},
		{name: "flag with value", text: `no-pty="yes" ` + a, wantErr: []string{"option no-pty takes no value"}},
		{name: "bad from network", text: `from="10.0.0.1/8" ` + a, wantErr: []string{"line 1", "from=", "host bits", "10.0.0.0/8"}},
		{name: "bad from cidr", text: `from="10.0.0.0/99" ` + a, wantErr: []string{"from=", "not a network"}},
		{name: "empty from entry", text: `from="10.0.0.1,,10.0.0.2" ` + a, wantErr: []string{"empty entry"}},
		{name: "empty from", text: `from="" ` + a, wantErr: []string{"the list is empty"}},
		{name: "bad expiry", text: `expiry-time="2030-12-31" ` + a, wantErr: []string{"expiry-time", "YYYYMMDD"}},
		{name: "impossible date", text: `expiry-time="20301399" ` + a, wantErr: []string{"expiry-time", "not a valid date"}},
		{name: "error on third line only", text: a + "\n" + b + "\nssh-ed25519 zzz", wantErr: []string{"line 3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := ParseAuthorizedKeys(tc.text)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("parsed %d keys; want an error mentioning %q", len(keys), tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				if strings.Contains(err.Error(), fields[1]) {
					t.Errorf("error quotes key material: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var lines []int
			for _, k := range keys {
				lines = append(lines, k.Line)
				if k.Fingerprint != ssh.FingerprintSHA256(k.Key) {
					t.Errorf("line %d: fingerprint %q does not match the key", k.Line, k.Fingerprint)
				}
			}
			if len(lines) != len(tc.wantLines) {
				t.Fatalf("key lines %v, want %v", lines, tc.wantLines)
			}
			for i := range lines {
				if lines[i] != tc.wantLines[i] {
					t.Fatalf("key lines %v, want %v", lines, tc.wantLines)
				}
			}
		})
	}
}

func TestAuthorizedKeyFields(t *testing.T) {
	k := newClientKey(t, "")
	keys, err := ParseAuthorizedKeys(`from="127.0.0.1",expiry-time="20300102",no-touch-required ` + k.authorized + " bob @ desk\x07")
	if err != nil {
		t.Fatal(err)
	}
	got := keys[0]
	if got.Comment != "bob @ desk" {
		t.Errorf("comment %q: control characters should be dropped, spaces kept", got.Comment)
	}
	if want := time.Date(2030, 1, 2, 0, 0, 0, 0, time.Local); !got.Expires.Equal(want) {
		t.Errorf("expires %v, want %v (local time without Z)", got.Expires, want)
	}
	if !got.NoTouchRequired {
		t.Error("no-touch-required not recorded")
	}
	if p := got.Principal(); p.Kind != authn.KindSSH || p.KeyFingerprint != got.Fingerprint || p.KeyComment != "bob @ desk" ||
		p.String() != got.Fingerprint+" bob @ desk" {
		t.Errorf("Principal() = %+v (%s)", p, p)
	}
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5}
	if err := got.allows(local, time.Date(2030, 1, 1, 0, 0, 0, 0, time.Local)); err != nil {
		t.Errorf("allowed address before expiry refused: %v", err)
	}
	if err := got.allows(local, got.Expires); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("at expiry: %v, want expired", err)
	}
	if err := got.allows(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1)}, time.Date(2030, 1, 1, 0, 0, 0, 0, time.Local)); err == nil || !strings.Contains(err.Error(), "from=") {
		t.Errorf("other address: %v, want refused by from=", err)
	}
}

func FuzzParseAuthorizedKeys(f *testing.F) {
	k := newClientKey(f, "seed")
	f.Add(k.authorized)
	f.Add("# c\n\n" + k.authorized + "\r\n")
	f.Add(`restrict,command="x \"y\"",from="10.0.0.0/8,!10.1.*" ` + k.authorized)
	f.Add(`expiry-time="20301231Z" ` + k.authorized)
	f.Add(`pty ` + k.authorized)
	f.Add(`from="` + k.authorized)
	f.Add("ssh-ed25519 AAAA\nssh-rsa")
	f.Add("-----BEGIN OPENSSH PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, text string) {
		keys, err := ParseAuthorizedKeys(text)
		lines := strings.Count(text, "\n") + 1
		if err != nil {
			if keys != nil {
				t.Fatalf("keys returned alongside error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "authorized_keys line ") {
				t.Fatalf("error does not name the line: %v", err)
			}
			return
		}
		prev := 0
		for _, key := range keys {
			if key.Line <= prev || key.Line > lines {
				t.Fatalf("line %d out of order or range (previous %d, %d lines)", key.Line, prev, lines)
			}
			prev = key.Line
			if key.Key == nil || !strings.HasPrefix(key.Fingerprint, "SHA256:") {
				t.Fatalf("line %d: key %v fingerprint %q", key.Line, key.Key, key.Fingerprint)
			}
			if len([]rune(key.Comment)) > 64 {
				t.Fatalf("comment longer than 64 runes: %q", key.Comment)
			}
			// Whatever got in must be usable by the server: its checks must not panic.
			_ = key.allows(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, time.Now())
		}
	})
}
