package hubstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Files hamcp keeps from the hub beside its database, outside every folder the file tools reach:
// hub backups the user downloaded (HubDownloads; never a backup "through hamcp", so they open no
// admin write gate) and the earlier content of File Manager files hamcp overwrote or deleted
// (HubFileHistory), so that it can be put back.
const (
	HubDownloads   = "hubitat-downloads"
	HubFileHistory = "hubitat-file-history"
)

// KeptCopies is how many copies of one name a folder keeps; older ones are deleted.
const KeptCopies = 3

// KeptFile is one file kept.
type KeptFile struct {
	Path    string    `json:"path"`
	Name    string    `json:"name"` // the hub's name for it
	SavedAt time.Time `json:"-"`
	Size    int64     `json:"sizeBytes"`
	SHA256  string    `json:"sha256"`
}

// KeepHubFile writes data, the hub's file name, into folder (HubDownloads or HubFileHistory) as
// "<name>@<time>" (mode 0600, whole or not at all) and prunes that name to KeptCopies.
func (s *Store) KeepHubFile(ctx context.Context, folder, name string, at time.Time, data []byte) (KeptFile, error) {
	dir, err := s.keptDir(ctx, folder)
	if err != nil {
		return KeptFile{}, err
	}
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") || strings.Contains(name, "@") {
		return KeptFile{}, fmt.Errorf("store: %q is not a file name to keep", name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return KeptFile{}, fmt.Errorf("store: folder %s: %w", dir, err)
	}
	sum := sha256.Sum256(data)
	k := KeptFile{Name: name, SavedAt: at.UTC(), Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	k.Path = filepath.Join(dir, name+"@"+k.SavedAt.Format("20060102T150405.000000000Z"))
	if err := writeFileAtomic(k.Path, data); err != nil {
		return KeptFile{}, fmt.Errorf("store: keep %s: %w", k.Path, err)
	}
	return k, s.pruneKept(dir, name)
}

// KeptCopiesOf lists the copies of name in folder, newest first.
func (s *Store) KeptCopiesOf(ctx context.Context, folder, name string) ([]KeptFile, error) {
	dir, err := s.keptDir(ctx, folder)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read %s: %w", dir, err)
	}
	var out []KeptFile
	for _, e := range ents {
		base, stamp, ok := strings.Cut(e.Name(), "@")
		if !ok || base != name || e.IsDir() {
			continue
		}
		at, err := time.Parse("20060102T150405.000000000Z", stamp)
		if err != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, KeptFile{Path: filepath.Join(dir, e.Name()), Name: name, SavedAt: at, Size: fi.Size()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SavedAt.After(out[j].SavedAt) })
	return out, nil
}

func (s *Store) pruneKept(dir, name string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("store: read %s: %w", dir, err)
	}
	var mine []string
	for _, e := range ents {
		if base, _, ok := strings.Cut(e.Name(), "@"); ok && base == name {
			mine = append(mine, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(mine))) // the time stamps sort as text
	for _, old := range mine[min(len(mine), KeptCopies):] {
		if err := os.Remove(filepath.Join(dir, old)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: prune %s: %w", old, err)
		}
	}
	return nil
}

func (s *Store) keptDir(ctx context.Context, folder string) (string, error) {
	if folder != HubDownloads && folder != HubFileHistory {
		return "", fmt.Errorf("store: unknown folder %q", folder)
	}
	backups, err := s.backupDir(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(backups), folder), nil
}
