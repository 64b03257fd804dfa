// Package sandbox builds the directory tree that stands for the folders the
// Supervisor mounts into the hamcp add-on (/config, /ssl, /backup, /share,
// /media, /addons, /addon_configs), filled with the files a real Home
// Assistant install has, so file tools are exercised on realistic content.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// DefaultHAVersion is written to .HA_VERSION and the backup metadata when
// Options.HAVersion is empty; it matches the simulated Home Assistant.
const DefaultHAVersion = "2026.8.1"

// RecorderFile is the recorder database's name inside Config; the sandbox
// does not create it (recorder.Generate does).
const RecorderFile = "home-assistant_v2.db"

// Layout holds the absolute paths of the sandbox folders.
type Layout struct{ Root, Config, SSL, Backup, Share, Media, Addons, AddonConfigs string }

// RecorderPath is where Home Assistant keeps its recorder database.
func (l Layout) RecorderPath() string { return filepath.Join(l.Config, RecorderFile) }

// Options shapes the generated content.
type Options struct {
	Now       time.Time // timestamps in logs, backups and .storage; zero => time.Now()
	Entities  []string  // entity ids the config may mention; missing kinds fall back to defaults
	HAVersion string    // zero => DefaultHAVersion
}

func layoutOf(root string) Layout {
	j := func(s string) string { return filepath.Join(root, s) }
	return Layout{Root: root, Config: j("config"), SSL: j("ssl"), Backup: j("backup"), Share: j("share"),
		Media: j("media"), Addons: j("addons"), AddonConfigs: j("addon_configs")}
}

func (l Layout) dirs() []string {
	return []string{l.Config, l.SSL, l.Backup, l.Share, l.Media, l.Addons, l.AddonConfigs}
}

// marker is written last, so its presence means a complete sandbox.
const marker = "config/.HA_VERSION"

// Create builds the sandbox under root and returns its layout.
//
// On an existing root it is safe to call again: a missing or empty root is
// filled; a root that already holds a complete sandbox (all folders plus
// config/.HA_VERSION) is returned as is, without rewriting any file, so edits
// made by earlier runs survive; any other non-empty root is refused.
func Create(root string, o Options) (Layout, error) {
	if root == "" {
		return Layout{}, errors.New("sandbox: root: must be a directory path, e.g. /tmp/hamcp-demo")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return Layout{}, fmt.Errorf("sandbox: root %q: %w", root, err)
	}
	l := layoutOf(abs)
	files, err := render(o)
	if err != nil {
		return Layout{}, err
	}
	switch state, err := inspect(l); {
	case err != nil:
		return Layout{}, err
	case state == complete:
		return l, nil
	case state == foreign:
		return Layout{}, fmt.Errorf("sandbox: root %s is not empty and is not a sandbox; remove it or choose another directory", abs)
	}
	for _, d := range l.dirs() {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Layout{}, fmt.Errorf("sandbox: %w", err)
		}
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(abs, f.path), f.data, f.mode); err != nil {
			return Layout{}, err
		}
	}
	version := o.HAVersion
	if version == "" {
		version = DefaultHAVersion
	}
	if err := writeFile(filepath.Join(abs, marker), []byte(version), 0o644); err != nil {
		return Layout{}, err
	}
	return l, nil
}

type rootState int

const (
	empty rootState = iota
	complete
	foreign
)

func inspect(l Layout) (rootState, error) {
	fi, err := os.Stat(l.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return empty, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sandbox: root: %w", err)
	}
	if !fi.IsDir() {
		return 0, fmt.Errorf("sandbox: root %s is a file; pass a directory path", l.Root)
	}
	entries, err := os.ReadDir(l.Root)
	if err != nil {
		return 0, fmt.Errorf("sandbox: root: %w", err)
	}
	if len(entries) == 0 {
		return empty, nil
	}
	if _, err := os.Stat(filepath.Join(l.Root, marker)); err != nil {
		return foreign, nil
	}
	for _, d := range l.dirs() {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return foreign, nil
		}
	}
	return complete, nil
}

func writeFile(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if mode == fs.ModeDir {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}
