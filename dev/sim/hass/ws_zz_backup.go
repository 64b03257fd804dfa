package hass

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// Core's backup integration over WebSocket (components/backup/websocket.py and manager.py) as a
// Container or Core install has it: one agent, backup.local, writing tar files into
// <config>/backups the way CoreBackupReaderWriter does (./backup.json and a
// ./homeassistant.tar.gz whose files sit under data/). Generating runs in the background:
// backup/generate answers {backup_job_id} at once and backup/info's state says when it is done.

const localAgent = "backup.local"

// backupFolderNames are the Folder enum's values (models.py).
var backupFolderNames = []string{"share", "addons/local", "ssl", "media"}

// coreBackups is one server's backup manager state.
type coreBackups struct {
	mu        sync.Mutex
	state     string         // idle | create_backup | restore_backup
	lastEvent map[string]any // last_action_event
	passwords map[string]string
}

var (
	coreBackupsMu  sync.Mutex
	coreBackupsFor = map[weak.Pointer[Server]]*coreBackups{}
)

func (s *Server) backups() *coreBackups {
	coreBackupsMu.Lock()
	defer coreBackupsMu.Unlock()
	key := weak.Make(s)
	if m, ok := coreBackupsFor[key]; ok {
		return m
	}
	m := &coreBackups{state: "idle", passwords: map[string]string{}}
	coreBackupsFor[key] = m
	return m
}

func init() {
	for name, cmd := range backupCommands() {
		wsCommands[name] = cmd
	}
}

func backupCommands() map[string]wsCommand {
	return map[string]wsCommand{
		"backup/agents/info": {admin: true, handle: func(c *wsConn, id int64, m map[string]any) {
			agents := []any{}
			if c.s.h.ConfigDir() != "" {
				agents = append(agents, map[string]any{"agent_id": localAgent, "name": "local"})
			}
			c.result(id, map[string]any{"agents": agents})
		}},
		"backup/info": {admin: true, handle: func(c *wsConn, id int64, m map[string]any) {
			list := []any{}
			for _, b := range readCoreBackups(c.s.h.ConfigDir()) {
				list = append(list, b.json())
			}
			mgr := c.s.backups()
			mgr.mu.Lock()
			defer mgr.mu.Unlock()
			c.result(id, map[string]any{"agent_errors": map[string]any{}, "backups": list, "last_attempted_automatic_backup": nil,
				"last_completed_automatic_backup": nil, "last_action_event": mgr.lastEvent, "next_automatic_backup": nil,
				"next_automatic_backup_additional": false, "state": mgr.state})
		}},
		"backup/details": {admin: true, schema: schema{{name: "backup_id", req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			var found any
			if b := findCoreBackup(c.s.h.ConfigDir(), str(m, "backup_id")); b != nil {
				found = b.json()
			}
			c.result(id, map[string]any{"agent_errors": map[string]any{}, "backup": found})
		}},
		"backup/delete": {admin: true, schema: schema{{name: "backup_id", req: true, kind: "str"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			// Agents answer BackupNotFound for an unknown id, which the manager skips: no error.
			if b := findCoreBackup(c.s.h.ConfigDir(), str(m, "backup_id")); b != nil {
				if err := os.Remove(b.path); err != nil && !os.IsNotExist(err) {
					c.result(id, map[string]any{"agent_errors": map[string]any{localAgent: err.Error()}})
					return
				}
			}
			c.result(id, map[string]any{"agent_errors": map[string]any{}})
		}},
		"backup/generate": {admin: true, schema: schema{{name: "agent_ids", req: true, kind: "list"}, {name: "include_addons", kind: "list"},
			{name: "include_all_addons", kind: "bool"}, {name: "include_database", kind: "bool"}, {name: "include_folders", kind: "list"},
			{name: "include_homeassistant", kind: "bool"}, {name: "name", kind: "any"}, {name: "password", kind: "any"}},
			handle: wsGenerateBackup},
		"backup/restore": {admin: true, schema: schema{{name: "backup_id", req: true, kind: "str"}, {name: "agent_id", req: true, kind: "str"},
			{name: "password", kind: "str"}, {name: "restore_addons", kind: "list"}, {name: "restore_database", kind: "bool"},
			{name: "restore_folders", kind: "list"}, {name: "restore_homeassistant", kind: "bool"}},
			handle: wsRestoreBackup},
	}
}

// listOfStr checks a [str] field, with voluptuous's wording for a bad item.
func listOfStr(m map[string]any, key string, allowed []string) (string, bool) {
	for i, v := range m[key].([]any) {
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("expected str @ data['%s'][%d]. Got %s", key, i, pyRepr(fromGo(v))), false
		}
		if allowed != nil && !slices.Contains(allowed, s) {
			return fmt.Sprintf("expected Folder @ data['%s'][%d]. Got %s", key, i, pyRepr(s)), false
		}
	}
	return "", true
}

func wsGenerateBackup(c *wsConn, id int64, m map[string]any) {
	for _, k := range []string{"name", "password"} { // vol.Any(str, None)
		if v, given := m[k]; given && v != nil {
			if _, ok := v.(string); !ok {
				c.sendError(id, "invalid_format", fmt.Sprintf("expected str for dictionary value @ data['%s']. Got %s", k, pyRepr(fromGo(v))))
				return
			}
		}
	}
	for _, k := range []string{"agent_ids", "include_addons", "include_folders"} {
		if _, given := m[k]; !given {
			continue
		}
		var allowed []string
		if k == "include_folders" {
			allowed = backupFolderNames
		}
		if msg, ok := listOfStr(m, k, allowed); !ok {
			c.sendError(id, "invalid_format", msg)
			return
		}
	}
	mgr := c.s.backups()
	mgr.mu.Lock()
	defer mgr.mu.Unlock()
	if mgr.state != "idle" {
		c.sendError(id, "home_assistant_error", "Backup manager busy: "+mgr.state)
		return
	}
	agents := strList(m["agent_ids"])
	if !slices.Contains(agents, localAgent) || c.s.h.ConfigDir() == "" {
		c.sendError(id, "home_assistant_error", "At least one available backup agent must be selected, got "+pyRepr(strsToList(agents)))
		return
	}
	addons, folders := strList(m["include_addons"]), strList(m["include_folders"])
	allAddons := boolOr(m, "include_all_addons", false)
	switch {
	case allAddons && len(addons) > 0:
		c.sendError(id, "home_assistant_error", "Cannot include all addons and specify specific addons")
		return
	case len(addons) > 0 || allAddons || len(folders) > 0:
		c.sendError(id, "home_assistant_error", "Addons and folders are not supported by core backup")
		return
	case !boolOr(m, "include_homeassistant", true):
		c.sendError(id, "home_assistant_error", "Home Assistant must be included in backup")
		return
	}
	now := c.s.h.Now().In(c.s.h.Location())
	name := strings.TrimSpace(str(m, "name"))
	if name == "" {
		name = "Custom backup " + home.Version
	}
	date := now.Format("2006-01-02T15:04:05.000000-07:00")
	sum := sha1.Sum([]byte(strings.ToLower(date + " - " + name)))
	b := &coreBackup{ID: hex.EncodeToString(sum[:])[:8], Name: name, Date: date, Database: boolOr(m, "include_database", true),
		Protected: str(m, "password") != "", Version: home.Version}
	b.path = filepath.Join(c.s.h.ConfigDir(), "backups", suggestedFilename(name, now))
	if b.Protected {
		mgr.passwords[b.ID] = str(m, "password")
	}
	mgr.state = "create_backup"
	mgr.lastEvent = map[string]any{"manager_state": "create_backup", "reason": nil, "stage": nil, "state": "in_progress"}
	go c.s.finishCoreBackup(b)
	c.result(id, map[string]any{"backup_job_id": b.ID})
}

// finishCoreBackup writes the tar while the manager says create_backup, then goes idle.
func (s *Server) finishCoreBackup(b *coreBackup) {
	if s.o.Supervisor != nil {
		s.o.Supervisor.slowAction("backup/generate") // tests hold it like the Supervisor's backups
	}
	err := b.write(s.h.ConfigDir())
	mgr := s.backups()
	mgr.mu.Lock()
	defer mgr.mu.Unlock()
	state, reason := "completed", any(nil)
	if err != nil {
		state, reason = "failed", "upload_failed"
		s.h.Log("error", "homeassistant.components.backup", "Error creating backup: %v", err)
	}
	mgr.state = "idle"
	mgr.lastEvent = map[string]any{"manager_state": "create_backup", "reason": reason, "stage": nil, "state": state}
}

func wsRestoreBackup(c *wsConn, id int64, m map[string]any) {
	mgr := c.s.backups()
	mgr.mu.Lock()
	if mgr.state != "idle" {
		mgr.mu.Unlock()
		c.sendError(id, "home_assistant_error", "Backup manager busy: "+mgr.state)
		return
	}
	pw, known := mgr.passwords[str(m, "backup_id")]
	mgr.mu.Unlock()
	backupID, agent := str(m, "backup_id"), str(m, "agent_id")
	if agent != localAgent {
		c.sendError(id, "unknown_error", "Unknown error") // the manager's KeyError on an unknown agent
		return
	}
	b := findCoreBackup(c.s.h.ConfigDir(), backupID)
	switch {
	case b == nil:
		c.sendError(id, "home_assistant_error", "Backup "+backupID+" not found in agent "+agent)
		return
	case len(strList(m["restore_addons"])) > 0 || len(strList(m["restore_folders"])) > 0:
		c.sendError(id, "home_assistant_error", "Addons and folders are not supported in core restore")
		return
	case !boolOr(m, "restore_homeassistant", true) && !boolOr(m, "restore_database", true):
		c.sendError(id, "home_assistant_error", "Home Assistant or database must be included in restore")
		return
	case b.Protected && (str(m, "password") == "" || known && str(m, "password") != pw):
		c.sendError(id, "password_incorrect", "Incorrect password")
		return
	}
	if boolOr(m, "restore_homeassistant", true) {
		if err := extractMembers(b.path, map[string]string{"homeassistant.tar.gz": c.s.h.ConfigDir()}, "data/"); err != nil {
			c.sendError(id, "home_assistant_error", err.Error())
			return
		}
	}
	mgr.mu.Lock()
	mgr.lastEvent = map[string]any{"manager_state": "restore_backup", "reason": nil, "stage": nil, "state": "core_restart"}
	mgr.mu.Unlock()
	// core restarts inside the command (homeassistant.restart, blocking): the caller's connection
	// drops before any result, and the restored configuration is what HA loads again.
	_, _ = c.s.h.CallService(home.ServiceCall{Domain: "homeassistant", Service: "reload_all"})
	if _, err := c.s.h.CallService(home.ServiceCall{Domain: "homeassistant", Service: "restart"}); err != nil {
		c.sendError(id, "home_assistant_error", err.Error())
		return
	}
	c.result(id, nil)
}

// coreBackup is one tar file in <config>/backups, described by its backup.json.
type coreBackup struct {
	ID        string
	Name      string
	Date      string
	Database  bool
	Protected bool
	Version   string
	size      int64
	path      string
}

func (b *coreBackup) json() map[string]any {
	return map[string]any{"addons": []any{}, "agents": map[string]any{localAgent: map[string]any{"protected": b.Protected, "size": b.size}},
		"backup_id": b.ID, "date": b.Date, "database_included": b.Database, "failed_agent_ids": []any{}, "folders": []any{},
		"homeassistant_included": true, "homeassistant_version": b.Version, "name": b.Name, "with_automatic_settings": false}
}

var slugChars = regexp.MustCompile(`[^a-z0-9]+`)

// suggestedFilename is the local agent's file name: the slugified name and the time.
func suggestedFilename(name string, t time.Time) string {
	slug := strings.Trim(slugChars.ReplaceAllString(strings.ToLower(name), "_"), "_")
	return fmt.Sprintf("%s_%s.tar", slug, t.Format("2006-01-02_15.04_05.000000"))
}

// write packs the configuration (without the recorder database when asked) like
// CoreBackupReaderWriter: ./backup.json, then ./homeassistant.tar.gz with the files under data/.
func (b *coreBackup) write(configDir string) error {
	if err := os.MkdirAll(filepath.Dir(b.path), 0o755); err != nil {
		return err
	}
	var inner bytes.Buffer
	gz := gzip.NewWriter(&inner)
	itw := tar.NewWriter(gz)
	err := tarTree(itw, configDir, "data/", func(rel string, d fs.DirEntry) bool {
		top := strings.Split(filepath.ToSlash(rel), "/")[0]
		return top == "backups" || top == "tmp_backups" || top == "tts" || top == "__pycache__" || strings.HasSuffix(rel, ".log") ||
			strings.HasPrefix(d.Name(), "home-assistant_v2.db") && (!b.Database || strings.HasSuffix(d.Name(), "-shm") || strings.HasSuffix(d.Name(), "-wal"))
	})
	if err != nil {
		return err
	}
	if err := itw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	meta, _ := json.Marshal(map[string]any{"compressed": true, "date": b.Date,
		"extra":         map[string]any{"instance_id": "0b4a5c1e7f6d4e3a9b8c7d6e5f4a3b2c", "with_automatic_settings": false},
		"homeassistant": map[string]any{"exclude_database": !b.Database, "version": b.Version}, "name": b.Name,
		"protected": b.Protected, "slug": b.ID, "type": "partial", "version": 2})
	tmp := b.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	if err := writeTarFile(tw, "./backup.json", meta); err != nil {
		f.Close()
		return err
	}
	if err := writeTarFile(tw, "./homeassistant.tar.gz", inner.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	b.size = st.Size()
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, b.path)
}

// readCoreBackups lists the backups in <config>/backups, newest first.
func readCoreBackups(configDir string) []*coreBackup {
	if configDir == "" {
		return nil
	}
	entries, _ := os.ReadDir(filepath.Join(configDir, "backups"))
	var out []*coreBackup
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".tar") {
			continue
		}
		if b := readCoreBackup(filepath.Join(configDir, "backups", e.Name())); b != nil {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Date > out[j].Date })
	return out
}

func findCoreBackup(configDir, id string) *coreBackup {
	for _, b := range readCoreBackups(configDir) {
		if b.ID == id {
			return b
		}
	}
	return nil
}

func readCoreBackup(path string) *coreBackup {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return nil
		}
		if strings.TrimPrefix(hdr.Name, "./") != "backup.json" {
			continue
		}
		var meta struct {
			Slug, Name, Date string
			Protected        bool
			HomeAssistant    *struct {
				ExcludeDatabase bool   `json:"exclude_database"`
				Version         string `json:"version"`
			} `json:"homeassistant"`
		}
		if json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&meta) != nil || meta.Slug == "" || meta.HomeAssistant == nil {
			return nil
		}
		return &coreBackup{ID: meta.Slug, Name: meta.Name, Date: meta.Date, Protected: meta.Protected, Database: !meta.HomeAssistant.ExcludeDatabase,
			Version: meta.HomeAssistant.Version, size: st.Size(), path: path}
	}
}
