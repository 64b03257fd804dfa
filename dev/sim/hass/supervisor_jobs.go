package hass

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// Background jobs of the Supervisor (supervisor/jobs): backups started with "background": true
// and restores. A job is listed at /jobs/<uuid> from the moment it starts; its reference is the
// backup's slug, as the Supervisor's backup manager sets it.

// startJob records a running job and returns its uuid.
func (s *Supervisor) startJob(name, reference string) string {
	id := randHex(16)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs[id] = map[string]any{"name": name, "reference": reference, "uuid": id, "progress": 0, "stage": nil, "done": false,
		"errors": []any{}, "child_jobs": []any{}, "extra": nil, "created": home.ISOTime(s.o.Home.Now())}
	return id
}

// finishJob marks a job done; a non-empty failure becomes its error, as JobException's message.
func (s *Supervisor) finishJob(id, reference, failure string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.jobs[id]
	if old == nil {
		return
	}
	// A fresh map: /jobs/<uuid> encodes the one it read after letting go of the lock.
	j := make(map[string]any, len(old))
	for k, v := range old {
		j[k] = v
	}
	s.jobs[id] = j
	j["done"], j["progress"] = true, 100
	if reference != "" {
		j["reference"] = reference
	}
	if failure != "" {
		j["errors"] = []any{map[string]any{"type": "BackupError", "message": failure, "stage": nil}}
	}
}

// backupInBackground writes a planned backup while the caller gets the job id at once.
func (s *Supervisor) backupInBackground(b *backup) string {
	job := s.startJob("backup_manager_"+b.Type+"_backup", b.Slug)
	go func() {
		s.slowAction("/backups/new")
		s.mu.Lock()
		err := s.writeBackup(b)
		if err == nil {
			s.backups[b.Slug] = b
		}
		s.mu.Unlock()
		failure := ""
		if err != nil {
			failure = "Backup failed: " + err.Error()
		}
		s.finishJob(job, b.Slug, failure)
	}()
	return job
}

// restoreParts is what a restore puts back.
type restoreParts struct {
	ha      bool
	addons  []string
	folders []string
}

// restoreBackup is POST /backups/<slug>/restore/full and /restore/partial (SCHEMA_RESTORE_FULL,
// SCHEMA_RESTORE_PARTIAL). Like the Supervisor, a restore that fails before it freezes the
// system answers 400 naming its job.
func (s *Supervisor) restoreBackup(r *supReq, full bool) supResp {
	allowed := map[string]bool{"password": true, "background": true, "location": true}
	if !full {
		allowed["homeassistant"], allowed["addons"], allowed["folders"] = true, true, true
	}
	for k, v := range r.body {
		if !allowed[k] {
			return fail(400, fmt.Sprintf("extra keys not allowed @ data['%s']. Got %s", k, pyRepr(fromGo(v))))
		}
	}
	for _, f := range strList(r.body["folders"]) {
		if !contains(backupFolders, f) {
			return fail(400, fmt.Sprintf("value must be one of %s for dictionary value @ data['folders']. Got %s", pyRepr(strsToList(backupFolders)), pyQuote(f)))
		}
	}
	s.mu.Lock()
	b := s.backups[r.p["slug"]]
	s.mu.Unlock()
	if b == nil {
		return fail(404, "Backup does not exist")
	}
	parts := restoreParts{ha: b.HA, addons: b.Addons, folders: b.Folders}
	kind := "full"
	if !full {
		kind = "partial"
		parts = restoreParts{ha: truthy(fromGo(r.body["homeassistant"])) && b.HA}
		for _, f := range strList(r.body["folders"]) {
			switch {
			case f == "homeassistant":
				parts.ha = b.HA
			case contains(b.Folders, f):
				parts.folders = append(parts.folders, f)
			}
		}
		for _, a := range strList(r.body["addons"]) {
			if contains(b.Addons, a) {
				parts.addons = append(parts.addons, a)
			}
		}
	}
	job := s.startJob("backup_manager_"+kind+"_restore", b.Slug)
	pw, _ := r.body["password"].(string)
	if b.Protected && pw == "" {
		s.finishJob(job, "", "Invalid password for backup "+b.Slug)
		return fail(400, "An error occurred during restore of "+b.Slug+", check job '"+job+"' or supervisor logs for details")
	}
	run := func() { s.finishJob(job, "", s.runRestore(b, parts)) }
	if truthy(fromGo(r.body["background"])) {
		go run()
	} else {
		run()
	}
	return ok(map[string]any{"job_id": job})
}

// runRestore unpacks what was asked back into place, then restarts core when its configuration
// came back. The recorder database stays: the simulator's recorder holds it open.
func (s *Supervisor) runRestore(b *backup, parts restoreParts) string {
	s.o.Home.Log("info", "supervisor.backups.manager", "Restoring backup %s", b.Slug)
	members := map[string]string{}
	if parts.ha {
		members["homeassistant.tar.gz"] = s.o.Folders["homeassistant"]
	}
	for _, f := range parts.folders {
		members[strings.ReplaceAll(f, "/", "_")+".tar.gz"] = s.o.Folders[f]
	}
	if err := extractMembers(b.path, members, ""); err != nil {
		return "Restore of " + b.Slug + " failed: " + err.Error()
	}
	for _, a := range parts.addons {
		s.o.Home.Log("info", "supervisor.addons.addon", "Restoring add-on %s from backup %s", a, b.Slug)
	}
	if parts.ha {
		// A restored configuration is read again when core starts.
		_, _ = s.o.Home.CallService(home.ServiceCall{Domain: "homeassistant", Service: "reload_all"})
		s.o.Home.Log("warning", "homeassistant.core", "Home Assistant restart requested by the Supervisor")
		if s.o.OnCoreRestart != nil {
			s.o.OnCoreRestart()
		}
	}
	return ""
}

// extractMembers unpacks each named inner .tar.gz of a backup into its directory, dropping strip
// from the front of the names inside (core's backups keep the configuration under data/).
func extractMembers(backupPath string, members map[string]string, strip string) error {
	if len(members) == 0 {
		return nil
	}
	f, err := os.Open(backupPath)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		dir, ok := members[strings.TrimPrefix(hdr.Name, "./")]
		if !ok || dir == "" {
			continue
		}
		if err := extractTarGz(tr, dir, strip); err != nil {
			return err
		}
	}
}

// extractTarGz writes the regular files of a gzipped tar under dir, refusing names that leave it.
func extractTarGz(r io.Reader, dir, strip string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(strings.TrimSuffix(strings.TrimPrefix(hdr.Name, strip), "/"))
		if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) || strings.HasPrefix(filepath.Base(name), "home-assistant_v2.db") {
			continue
		}
		target := filepath.Join(dir, name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			data, err := io.ReadAll(io.LimitReader(tr, 256<<20))
			if err != nil {
				return err
			}
			if err := os.WriteFile(target, data, 0o644); err != nil {
				return err
			}
		}
	}
}
