package hass

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// backup is a real tar file in BackupDir laid out like a Supervisor backup:
// ./backup.json plus one .tar.gz per folder or add-on.
type backup struct {
	Slug       string   `json:"slug"`
	Name       string   `json:"name"`
	Date       string   `json:"date"`
	Type       string   `json:"type"`
	Protected  bool     `json:"protected"`
	Compressed bool     `json:"compressed"`
	HA         bool     `json:"-"`
	ExcludeDB  bool     `json:"-"`
	Addons     []string `json:"-"`
	Folders    []string `json:"-"`
	size       int64
	path       string
}

var backupFolders = []string{"addons/local", "homeassistant", "media", "share", "ssl"}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (b *backup) summary() map[string]any {
	addons := []any{}
	for _, a := range b.Addons {
		addons = append(addons, a)
	}
	folders := []any{}
	for _, f := range b.Folders {
		folders = append(folders, f)
	}
	return map[string]any{"slug": b.Slug, "name": b.Name, "date": b.Date, "type": b.Type,
		"size": math.Round(float64(b.size)/1048576*100) / 100, "size_bytes": b.size, "location": nil, "locations": []any{nil},
		"protected": b.Protected, "compressed": b.Compressed,
		"content": map[string]any{"homeassistant": b.HA, "addons": addons, "folders": folders}}
}

func (s *Supervisor) listBackups(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]*backup, 0, len(s.backups))
	for _, b := range s.backups {
		list = append(list, b)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Date > list[j].Date })
	out := []any{}
	for _, b := range list {
		out = append(out, b.summary())
	}
	return ok(map[string]any{"backups": out, "days_until_stale": 3})
}

func (s *Supervisor) backupInfo(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.backups[r.p["slug"]]
	if b == nil {
		return fail(404, "Backup does not exist")
	}
	m := b.summary()
	m["supervisor_version"] = supervisorVersion
	m["homeassistant"] = nil
	if b.HA {
		m["homeassistant"] = home.Version
	}
	m["homeassistant_exclude_database"] = b.ExcludeDB
	addons := []any{}
	for _, slug := range b.Addons {
		if a := s.findAddon(slug); a != nil {
			addons = append(addons, map[string]any{"slug": a.slug, "name": a.name, "version": a.version, "size": 0.01})
		}
	}
	m["addons"], m["folders"] = addons, strsToList(b.Folders)
	m["repositories"] = []string{"core", "local", "https://github.com/hassio-addons/repository"}
	m["extra"] = map[string]any{}
	return ok(m)
}

func (s *Supervisor) deleteBackup(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.backups[r.p["slug"]]
	if b == nil {
		return fail(404, "Backup does not exist")
	}
	if err := os.Remove(b.path); err != nil && !os.IsNotExist(err) {
		return fail(500, "Can't remove backup "+b.Slug+": "+err.Error())
	}
	delete(s.backups, b.Slug)
	return ok(nil)
}

func (s *Supervisor) downloadBackup(r *supReq) supResp {
	s.mu.Lock()
	b := s.backups[r.p["slug"]]
	s.mu.Unlock()
	if b == nil {
		return fail(404, "Backup does not exist")
	}
	raw, err := os.ReadFile(b.path)
	if err != nil {
		return fail(500, "Can't read backup: "+err.Error())
	}
	return supResp{status: 200, bytes: raw, rawCT: "application/x-tar"}
}

// newBackup is POST /backups/new/full and /partial. With background the Supervisor answers
// with the job id as soon as the backup is under way (supervisor_jobs.go runs the rest).
func (s *Supervisor) newBackup(r *supReq, full bool) supResp {
	background := truthy(fromGo(r.body["background"]))
	if !background {
		s.slowAction("/backups/new")
	}
	b, bad := s.planBackup(r, full)
	if bad != nil {
		return *bad
	}
	if background {
		return ok(map[string]any{"job_id": s.backupInBackground(b)})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writeBackup(b); err != nil {
		return fail(500, "Backup failed: "+err.Error())
	}
	s.backups[b.Slug] = b
	job := s.doneJob("backup_manager_"+b.Type+"_backup", b.Slug)
	return ok(map[string]any{"slug": b.Slug, "job_id": job})
}

// planBackup validates a new backup's body like SCHEMA_BACKUP_FULL/PARTIAL and decides what it holds.
func (s *Supervisor) planBackup(r *supReq, full bool) (*backup, *supResp) {
	bad := func(status int, msg string) (*backup, *supResp) { f := fail(status, msg); return nil, &f }
	allowed := map[string]bool{"name": true, "password": true, "compressed": true, "location": true, "homeassistant_exclude_database": true,
		"background": true, "filename": true, "extra": true}
	if !full {
		allowed["homeassistant"], allowed["addons"], allowed["folders"] = true, true, true
	}
	for k, v := range r.body {
		if !allowed[k] {
			return bad(400, fmt.Sprintf("extra keys not allowed @ data['%s']. Got %s", k, pyRepr(fromGo(v))))
		}
	}
	if s.o.BackupDir == "" {
		return bad(400, "No backup location is configured")
	}
	now := s.o.Home.Now()
	b := &backup{Slug: randHex(4), Date: home.ISOTime(now), Compressed: true}
	b.Name, _ = r.body["name"].(string)
	if b.Name == "" {
		b.Name = "Automatic backup " + home.Version
		if !full {
			b.Name = "Partial backup " + now.In(s.o.Home.Location()).Format("2006-01-02 15:04:05")
		}
	}
	pw, _ := r.body["password"].(string)
	b.Protected = pw != ""
	b.ExcludeDB = truthy(fromGo(r.body["homeassistant_exclude_database"]))
	s.mu.Lock()
	defer s.mu.Unlock()
	if full {
		b.Type, b.HA = "full", true
		b.Folders = append([]string{}, backupFolders...)
		b.Folders = removeStr(b.Folders, "homeassistant")
		for _, a := range s.addons {
			if a.installed {
				b.Addons = append(b.Addons, a.slug)
			}
		}
	} else {
		b.Type = "partial"
		b.HA = truthy(fromGo(r.body["homeassistant"]))
		for _, f := range strList(r.body["folders"]) {
			if !contains(backupFolders, f) {
				return bad(400, fmt.Sprintf("value must be one of %s for dictionary value @ data['folders']. Got %s", pyRepr(strsToList(backupFolders)), pyQuote(f)))
			}
			if f == "homeassistant" {
				b.HA = true
				continue
			}
			b.Folders = append(b.Folders, f)
		}
		for _, slug := range strList(r.body["addons"]) {
			a := s.findAddon(slug)
			if a == nil || !a.installed {
				return bad(400, "Addon "+slug+" does not exist")
			}
			b.Addons = append(b.Addons, a.slug)
		}
		if !b.HA && len(b.Folders) == 0 && len(b.Addons) == 0 {
			return bad(400, "must contain at least one of addons, folders, homeassistant.")
		}
	}
	return b, nil
}

func removeStr(l []string, s string) []string {
	out := l[:0]
	for _, x := range l {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// writeBackup writes the tar atomically (temp file, then rename).
func (s *Supervisor) writeBackup(b *backup) error {
	if err := os.MkdirAll(s.o.BackupDir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(s.o.BackupDir, ".backup-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	meta := map[string]any{"slug": b.Slug, "version": 2, "name": b.Name, "date": b.Date, "type": b.Type, "supervisor_version": supervisorVersion,
		"extra": map[string]any{}, "compressed": true, "protected": b.Protected, "crypto": nil, "folders": b.Folders, "docker": map[string]any{},
		"repositories": []string{"core", "local", "https://github.com/hassio-addons/repository"}}
	if b.Protected {
		meta["crypto"] = "aes128"
	}
	if b.HA {
		meta["homeassistant"] = map[string]any{"version": home.Version, "exclude_database": b.ExcludeDB}
		if err := s.addFolder(tw, "homeassistant.tar.gz", s.o.Folders["homeassistant"], b.ExcludeDB); err != nil {
			return err
		}
	}
	for _, fo := range b.Folders {
		if err := s.addFolder(tw, strings.ReplaceAll(fo, "/", "_")+".tar.gz", s.o.Folders[fo], false); err != nil {
			return err
		}
	}
	var addons []any
	for _, slug := range b.Addons {
		a := s.findAddon(slug)
		addons = append(addons, map[string]any{"slug": a.slug, "name": a.name, "version": a.version, "size": 0.01})
		raw, _ := json.Marshal(map[string]any{"slug": a.slug, "version": a.version, "options": a.options, "state": a.state})
		if err := addMemberTarGz(tw, a.slug+".tar.gz", "addon.json", raw); err != nil {
			return err
		}
	}
	if addons == nil {
		addons = []any{}
	}
	meta["addons"] = addons
	raw, _ := json.MarshalIndent(meta, "", "  ")
	if err := writeTarFile(tw, "./backup.json", raw); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	b.size = st.Size()
	b.path = filepath.Join(s.o.BackupDir, b.Slug+".tar")
	return os.Rename(tmp, b.path)
}

func writeTarFile(tw *tar.Writer, name string, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Now()}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func addMemberTarGz(tw *tar.Writer, member, inner string, data []byte) error {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	itw := tar.NewWriter(gz)
	if err := writeTarFile(itw, inner, data); err != nil {
		return err
	}
	if err := itw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return writeTarFile(tw, "./"+member, buf.Bytes())
}

// tarTree writes the regular files and directories under dir into tw as prefix+their relative path,
// leaving out symlinks, unreadable entries and what skip says (a skipped directory with its
// contents). A file that grows while it is copied (the recorder database) is copied as far as its
// header says, as tar does.
func tarTree(tw *tar.Writer, dir, prefix string, skip func(rel string, d fs.DirEntry) bool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped, as tar would warn
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		if skip(rel, d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || d.Type()&fs.ModeSymlink != 0 || !(info.Mode().IsRegular() || d.IsDir()) {
			return nil
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = prefix + filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
			return tw.WriteHeader(hdr)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	})
}

// addFolder packs a directory as ./<member> (a gzipped tar) into the backup.
func (s *Supervisor) addFolder(tw *tar.Writer, member, dir string, excludeDB bool) error {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	itw := tar.NewWriter(gz)
	if dir != "" {
		err := tarTree(itw, dir, "", func(rel string, d fs.DirEntry) bool {
			return excludeDB && strings.HasPrefix(d.Name(), "home-assistant_v2.db")
		})
		if err != nil {
			return err
		}
	}
	if err := itw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return writeTarFile(tw, "./"+member, buf.Bytes())
}

// loadBackups lists the backups already in BackupDir (from their backup.json).
func (s *Supervisor) loadBackups() error {
	if s.o.BackupDir == "" {
		return nil
	}
	entries, err := os.ReadDir(s.o.BackupDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".tar") {
			continue
		}
		path := filepath.Join(s.o.BackupDir, e.Name())
		b, err := readBackupMeta(path)
		if err != nil {
			s.o.Logger.Warn("skipping unreadable backup", "file", e.Name(), "err", err)
			continue
		}
		s.backups[b.Slug] = b
	}
	return nil
}

func readBackupMeta(path string) (*backup, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("no backup.json: %w", err)
		}
		if strings.TrimPrefix(hdr.Name, "./") != "backup.json" {
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(tr, 1<<20))
		if err != nil {
			return nil, err
		}
		var meta struct {
			backup
			HomeAssistant *struct {
				ExcludeDatabase bool `json:"exclude_database"`
			} `json:"homeassistant"`
			Folders []string          `json:"folders"`
			Addons  []json.RawMessage `json:"addons"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
		b := meta.backup
		b.HA = meta.HomeAssistant != nil
		if meta.HomeAssistant != nil {
			b.ExcludeDB = meta.HomeAssistant.ExcludeDatabase
		}
		b.Folders = meta.Folders
		for _, a := range meta.Addons {
			var x struct {
				Slug string `json:"slug"`
			}
			if json.Unmarshal(a, &x) == nil {
				b.Addons = append(b.Addons, x.Slug)
			}
		}
		b.size, b.path = st.Size(), path
		if b.Slug == "" {
			return nil, fmt.Errorf("backup.json has no slug")
		}
		return &b, nil
	}
}

// doneJob records a finished job so /jobs/<id> can answer.
func (s *Supervisor) doneJob(name, reference string) string {
	id := randHex(16)
	s.jobs[id] = map[string]any{"name": name, "reference": reference, "uuid": id, "progress": 100, "stage": nil, "done": true,
		"errors": []any{}, "child_jobs": []any{}, "extra": nil, "created": home.ISOTime(s.o.Home.Now())}
	return id
}

func (s *Supervisor) jobInfo(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, found := s.jobs[r.p["uuid"]]
	if !found {
		return fail(404, "Job does not exist")
	}
	return ok(j)
}
