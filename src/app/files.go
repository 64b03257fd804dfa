package app

import (
	"os"
	"path/filepath"

	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/recorder"
	"github.com/hamcp/hamcp/src/tools/dbtools"
)

// fileRoots maps the aliases the tools accept onto the folders under fs_base. /config and
// /homeassistant both mean Home Assistant's configuration directory: the add-on mounts it at
// /homeassistant (current layout) or /config (legacy layout).
func fileRoots(base string) []fsguard.Root {
	haConfig := filepath.Join(base, "homeassistant")
	if _, err := os.Stat(haConfig); err != nil {
		haConfig = filepath.Join(base, "config")
	}
	roots := []fsguard.Root{{Alias: "/config", Path: haConfig}, {Alias: "/homeassistant", Path: haConfig}}
	for _, name := range []string{"ssl", "backup", "share", "media", "addons", "addon_configs"} {
		roots = append(roots, fsguard.Root{Alias: "/" + name, Path: filepath.Join(base, name)})
	}
	return roots
}

func openFiles(cfg *config.Config) (*fsguard.FS, error) {
	f, err := fsguard.New(fsguard.Options{
		Roots:     fileRoots(cfg.FSBase),
		TrashDir:  filepath.Join(cfg.DataDir, "trash"),
		Retention: cfg.TrashRetention,
		// hamcp's store, SSH host key and options (with their tokens) stay out of the file tools'
		// reach, whatever roots are added.
		Private: []string{cfg.DataDir, filepath.Dir(config.OptionsFile)},
	})
	if err != nil {
		return nil, &config.Error{Option: "fs_base", Source: "configuration", Value: cfg.FSBase, Reason: err.Error()}
	}
	return f, nil
}

// recorder opens Home Assistant's recorder database lazily: hamcp starts even without one.
func (a *App) recorder() *dbtools.Opener {
	o := &dbtools.Opener{Options: recorder.Options{Path: a.Config.RecorderDB, Candidates: []string{
		filepath.Join(a.Config.FSBase, "homeassistant", "home-assistant_v2.db"),
		filepath.Join(a.Config.FSBase, "config", "home-assistant_v2.db"),
	}, MaxResultBytes: a.Config.MaxResponseKB << 10}} // a page of rows stops at the answer's cap while it is read
	a.closers = append(a.closers, o.Close)
	return o
}
