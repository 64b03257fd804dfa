package sshserver

import (
	"context"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/src/authn"
)

func noopServe(context.Context, io.ReadWriteCloser, string, *authn.Principal) error { return nil }

func TestHostKeyCreatedOnceAndReused(t *testing.T) {
	key := newClientKey(t, "")
	path := filepath.Join(t.TempDir(), "data", "ssh_host_ed25519_key") // parent does not exist yet
	o := Options{AuthorizedKeys: key.authorized, HostKeyPath: path, Serve: noopServe}

	first, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Errorf("host key created with mode %04o, want 0600", perm)
	}
	if first.hostKey.PublicKey().Type() != ssh.KeyAlgoED25519 {
		t.Errorf("host key type %s, want ed25519", first.hostKey.PublicKey().Type())
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "BEGIN OPENSSH PRIVATE KEY") {
		t.Errorf("host key file is not in OpenSSH format")
	}
	second, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if first.HostKeyFingerprint() != second.HostKeyFingerprint() {
		t.Fatalf("host key changed between New calls: %s then %s", first.HostKeyFingerprint(), second.HostKeyFingerprint())
	}
	if !strings.HasPrefix(first.HostKeyFingerprint(), "SHA256:") {
		t.Errorf("fingerprint %q is not SHA256:…", first.HostKeyFingerprint())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("key directory holds %d entries, want only the key (temporary files left behind?)", len(entries))
	}
}

func TestHostKeyConcurrentFirstStart(t *testing.T) {
	key := newClientKey(t, "")
	path := filepath.Join(t.TempDir(), "ssh_host_ed25519_key")
	fps := make([]string, 8)
	var wg sync.WaitGroup
	for i := range fps {
		wg.Go(func() {
			s, err := New(Options{AuthorizedKeys: key.authorized, HostKeyPath: path, Serve: noopServe})
			if err != nil {
				t.Error(err)
				return
			}
			fps[i] = s.HostKeyFingerprint()
		})
	}
	wg.Wait()
	for _, fp := range fps[1:] {
		if fp != fps[0] {
			t.Fatalf("servers started together disagree on the host key: %v", fps)
		}
	}
}

func TestHostKeyProblems(t *testing.T) {
	key := newClientKey(t, "")
	cases := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr []string
	}{
		{"readable by others", func(t *testing.T, path string) {
			if _, err := New(Options{AuthorizedKeys: key.authorized, HostKeyPath: path, Serve: noopServe}); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"readable by others", "0644", "chmod 600"}},
		{"not a key", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"not a private key", "delete it"}},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, []string{"not a regular file"}},
		{"encrypted", func(t *testing.T, path string) {
			block, err := ssh.MarshalPrivateKeyWithPassphrase(key.priv, "", []byte("secret"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"passphrase"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ssh_host_ed25519_key")
			tc.prepare(t, path)
			_, err := New(Options{AuthorizedKeys: key.authorized, HostKeyPath: path, Serve: noopServe})
			if err == nil {
				t.Fatal("New accepted the host key")
			}
			for _, w := range append(tc.wantErr, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	key := newClientKey(t, "")
	dir := t.TempDir()
	good := Options{AuthorizedKeys: key.authorized, HostKeyPath: filepath.Join(dir, "k"), Serve: noopServe}
	cases := []struct {
		name    string
		edit    func(*Options)
		wantErr []string
	}{
		{"no Serve", func(o *Options) { o.Serve = nil }, []string{"Options.Serve is required"}},
		{"no host key path", func(o *Options) { o.HostKeyPath = "" }, []string{"HostKeyPath is required"}},
		{"negative cap", func(o *Options) { o.MaxConnections = -1 }, []string{"MaxConnections is -1"}},
		{"negative handshake timeout", func(o *Options) { o.HandshakeTimeout = -1 }, []string{"HandshakeTimeout"}},
		{"negative idle timeout", func(o *Options) { o.IdleTimeout = -1 }, []string{"IdleTimeout"}},
		{"no keys", func(o *Options) { o.AuthorizedKeys = "# none yet\n" }, []string{"HAMCP_SSH_AUTHORIZED_KEYS", "holds no public key"}},
		{"bad key line", func(o *Options) { o.AuthorizedKeys = key.authorized + "\nssh-ed25519 nope" }, []string{"ssh_authorized_keys", "line 2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			_, err := New(o)
			if err == nil {
				t.Fatal("New accepted the options")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	s, err := New(good)
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.MaxConnections != DefaultMaxConnections || s.opts.HandshakeTimeout != DefaultHandshakeTimeout ||
		s.opts.IdleTimeout != DefaultIdleTimeout {
		t.Errorf("defaults not applied: %+v", s.opts)
	}
}
