package sshserver

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"
)

// loadOrCreateHostKey returns the host key at path, generating an ed25519 key there the first
// time. A key that changed on every restart would make every client's known_hosts entry fail.
func loadOrCreateHostKey(path string) (signer ssh.Signer, created bool, err error) {
	signer, err = loadHostKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return signer, false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("sshserver: cannot create the directory for the SSH host key %s: %w", path, err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("sshserver: generating the SSH host key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "hamcp ssh host key")
	if err != nil {
		return nil, false, fmt.Errorf("sshserver: encoding the SSH host key: %w", err)
	}
	// Write a complete private file first and link it into place, so a crash never leaves a
	// half-written key and two processes starting together agree on one key.
	tmp, err := os.CreateTemp(dir, ".hamcp-hostkey-*") // CreateTemp uses mode 0600
	if err != nil {
		return nil, false, fmt.Errorf("sshserver: cannot write the SSH host key in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(pem.EncodeToMemory(block))
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return nil, false, fmt.Errorf("sshserver: cannot write the SSH host key %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			signer, err = loadHostKey(path)
			return signer, false, err
		}
		// Some filesystems have no hard links; a rename is still atomic.
		if err := os.Rename(tmp.Name(), path); err != nil {
			return nil, false, fmt.Errorf("sshserver: cannot store the SSH host key at %s: %w", path, err)
		}
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	signer, err = ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, false, fmt.Errorf("sshserver: using the new SSH host key: %w", err)
	}
	return signer, true, nil
}

func loadHostKey(path string) (ssh.Signer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("sshserver: SSH host key %s is not a regular file; remove it so hamcp can generate a key there, or point to a key file", path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("sshserver: SSH host key %s is readable by others (mode %04o); run chmod 600 %s, or delete it so hamcp generates a new one", path, perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sshserver: cannot read the SSH host key %s: %w", path, err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("sshserver: SSH host key %s is protected by a passphrase; hamcp needs an unencrypted key, or delete the file so hamcp generates one", path)
		}
		return nil, fmt.Errorf("sshserver: SSH host key %s is not a private key hamcp can read (%v); delete it so hamcp generates a new one", path, err)
	}
	return signer, nil
}
