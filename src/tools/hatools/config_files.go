package hatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// backupDir holds hamcp's timestamped copies of configuration files it overwrote. It is a
// dot-folder, which Home Assistant ignores, and its files end in .bak so nothing loads them.
const backupDir = "/config/.hamcp_backups"

var configWriteMu sync.Mutex

// keepBackups is how many copies of one file backupDir keeps; older ones go to the trash.
const keepBackups = 20

// configPath checks that a path names something in Home Assistant's configuration directory
// and returns it in the /config/... form. Confinement itself is fsguard's job.
func configPath(field, p string) (string, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return "", toolkit.InvalidArg(field, "is required", `{"`+field+`": "automations.yaml"}`)
	case p == "/config" || p == "/homeassistant":
		return "/config", nil
	case strings.HasPrefix(p, "/config/"):
		return p, nil
	case strings.HasPrefix(p, "/homeassistant/"):
		return "/config/" + strings.TrimPrefix(p, "/homeassistant/"), nil
	case strings.HasPrefix(p, "/"):
		return "", toolkit.InvalidArg(field, "must be inside the configuration directory (/config); use the file tools for other folders", `{"`+field+`": "/config/automations.yaml"}`)
	}
	return "/config/" + p, nil
}

// writable refuses files Home Assistant owns at run time, which an edit would corrupt or lose.
func writable(p string) error {
	rel := strings.TrimPrefix(p, "/config/")
	base := path.Base(rel)
	switch {
	case rel == ".storage" || strings.HasPrefix(rel, ".storage/"):
		return toolkit.InvalidArg("path", "is in .storage, which Home Assistant rewrites while running; change it through Home Assistant's own tools", "")
	case strings.HasPrefix(base, "home-assistant_v2.db") || strings.HasPrefix(base, "home-assistant.log"):
		return toolkit.InvalidArg("path", "is Home Assistant's database or log, not a configuration file", "")
	case strings.HasPrefix(rel, strings.TrimPrefix(backupDir, "/config/")+"/"):
		return toolkit.InvalidArg("path", "is one of hamcp's backups; read it with ha_read_config and write its content to the original file", "")
	}
	return nil
}

// fileError turns an fsguard error into one the model can act on.
func fileError(err error, field string) error {
	var pe *fsguard.PathError
	msg := err.Error()
	if errors.As(err, &pe) {
		msg = pe.Error()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &toolkit.Error{Code: "not_found", Field: field, Message: msg, Hint: "list the folder with ha_list_files"}
	case errors.Is(err, fsguard.ErrOutsideRoots), errors.Is(err, fsguard.ErrReadOnly):
		return &toolkit.Error{Code: "path_not_allowed", Field: field, Message: msg}
	}
	return &toolkit.Error{Code: "filesystem_error", Field: field, Message: msg}
}

func needFiles(d Deps) error {
	if d.Files == nil {
		return &toolkit.Error{Code: "not_supported", Message: "file access is not configured on this hamcp server", Hint: "the hamcp administrator must set fs_base"}
	}
	return nil
}

type readConfigArgs struct {
	Path   string `json:"path" jsonschema:"relative to /config" validate:"required" example:"configuration.yaml"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line (default 1)" validate:"omitempty,min=1"`
	Lines  int    `json:"lines,omitempty" jsonschema:"default 500" validate:"omitempty,min=1,max=5000"`
}

type readConfigResult struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	FromLine   int    `json:"from_line"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated,omitempty"`
	Next       string `json:"next,omitempty"`
}

type writeConfigArgs struct {
	Path     string `json:"path" jsonschema:"relative to /config" validate:"required" example:"configuration.yaml"`
	Content  string `json:"content" jsonschema:"the whole new file" validate:"required"`
	Validate *bool  `json:"validate,omitempty" jsonschema:"check and roll back on failure (default true)"`
}

type writeConfigResult struct {
	Path           string       `json:"path"`
	Bytes          int          `json:"bytes"`
	Created        bool         `json:"created"`
	Backup         string       `json:"backup,omitempty"`
	TrashVersionID string       `json:"trash_version_id,omitempty"`
	Version        int          `json:"version,omitempty"` // ha_config_history's copy of what was replaced
	Check          *configCheck `json:"check,omitempty"`
	Next           string       `json:"next"`
}

type listFilesArgs struct {
	Path      string `json:"path,omitempty" jsonschema:"default /config"`
	Pattern   string `json:"pattern,omitempty" jsonschema:"glob on names, e.g. auto*"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"4 levels deep"`
	All       bool   `json:"all,omitempty" jsonschema:"every file, not only YAML"`
	Hidden    bool   `json:"hidden,omitempty" jsonschema:"include dot-files"`
	toolkit.Page
}

type fileItem struct {
	Path     string `json:"path"`
	Dir      bool   `json:"dir,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Modified string `json:"modified"`
}

type backupItem struct {
	Source   string   `json:"source"` // hamcp | homeassistant
	Path     string   `json:"path,omitempty"`
	Of       string   `json:"of,omitempty"`
	Slug     string   `json:"slug,omitempty"`
	Name     string   `json:"name,omitempty"`
	Type     string   `json:"type,omitempty"`
	Date     string   `json:"date"`
	SizeMB   float64  `json:"size_mb,omitempty"`
	Bytes    int64    `json:"bytes,omitempty"`
	Content  []string `json:"content,omitempty"`
	Location string   `json:"location,omitempty"`

	at time.Time
}

// configFileTools are the configuration file tools, in the order tools/list shows them.
func configFileTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{readConfig(d), writeConfig(d), listFiles(d)}
}

// readConfig is ha_read_config.
func readConfig(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[readConfigArgs, readConfigResult]{
		Name: "ha_read_config", Toolset: SetConfig, Title: "Read a configuration file", Category: toolkit.Filesystem,
		Description: "Read a text file in HA's configuration directory, paged by lines. Automations: ha_list_automations; outside /config: the file tools.",
		ReadOnly:    true,
		Summary:     func(a readConfigArgs) string { return a.Path },
		Handler: func(ctx context.Context, c *toolkit.Call, a readConfigArgs) (readConfigResult, error) {
			return d.readConfigLines(a)
		},
	})
}

// readConfigLines reads a page of lines of a text file in /config.
func (d Deps) readConfigLines(a readConfigArgs) (readConfigResult, error) {
	if err := needFiles(d); err != nil {
		return readConfigResult{}, err
	}
	p, err := configPath("path", a.Path)
	if err != nil {
		return readConfigResult{}, err
	}
	lines := a.Lines
	if lines == 0 {
		lines = 500
	}
	from := max(a.Offset, 1)
	text, total, truncated, err := d.Files.ReadLines(p, from, lines)
	if err != nil {
		return readConfigResult{}, fileError(err, "path")
	}
	if !utf8.ValidString(text) {
		return readConfigResult{}, &toolkit.Error{Code: "unsupported_file", Field: "path", Message: p + " is not a text file", Hint: "use ha_read_file with encoding=base64"}
	}
	out := readConfigResult{Path: p, Content: text, FromLine: from, TotalLines: total, Truncated: truncated}
	if truncated {
		out.Next = fmt.Sprintf(`more lines follow: call again with {"path": %q, "offset": %d}`, p, from+strings.Count(text, "\n"))
	}
	return out, nil
}

// writeConfig is ha_write_config.
func writeConfig(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[writeConfigArgs, writeConfigResult]{
		Name: "ha_write_config", Toolset: SetConfig, Title: "Write a configuration file", Category: toolkit.Filesystem, Confirm: configFileConfirm(d),
		Description: "Replace a file in HA's configuration directory: backs it up, checks YAML and HA's configuration, and rolls a failing write back (with its errors). Apply with ha_reload_config or ha_restart; automations: the automation tools. The user confirms.",
		Destructive: true,
		Summary:     func(a writeConfigArgs) string { return fmt.Sprintf("%s (%d bytes)", a.Path, len(a.Content)) },
		Handler: func(ctx context.Context, c *toolkit.Call, a writeConfigArgs) (writeConfigResult, error) {
			if err := needFiles(d); err != nil {
				return writeConfigResult{}, err
			}
			p, err := configPath("path", a.Path)
			if err != nil {
				return writeConfigResult{}, err
			}
			if err := writable(p); err != nil {
				return writeConfigResult{}, err
			}
			if isYAML(p) {
				if err := checkYAMLSyntax(a.Content); err != nil {
					return writeConfigResult{}, toolkit.InvalidArg("content", "is not valid YAML: "+err.Error()+"; nothing was written", "")
				}
			}
			return replaceConfig(ctx, d, c, p, a.Content, boolOr(a.Validate, true))
		},
	})
}

// listFiles is ha_list_files.
func listFiles(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listFilesArgs, toolkit.List[fileItem]]{
		Name: "ha_list_files", Toolset: SetConfig, Title: "List configuration files", Category: toolkit.Filesystem,
		Description: "List folders and YAML files in HA's configuration directory (all=true: every file), optionally recursive and glob-filtered.",
		ReadOnly:    true,
		Summary:     func(a listFilesArgs) string { return a.Path },
		Handler: func(ctx context.Context, c *toolkit.Call, a listFilesArgs) (toolkit.List[fileItem], error) {
			if err := needFiles(d); err != nil {
				return toolkit.List[fileItem]{}, err
			}
			dir := a.Path
			if dir == "" {
				dir = "/config"
			}
			p, err := configPath("path", dir)
			if err != nil {
				return toolkit.List[fileItem]{}, err
			}
			if _, err := path.Match(a.Pattern, ""); err != nil {
				return toolkit.List[fileItem]{}, toolkit.InvalidArg("pattern", "is not a valid glob: "+err.Error(), `{"pattern": "*.yaml"}`)
			}
			items, err := walkConfig(d.Files, p, a)
			if err != nil {
				return toolkit.List[fileItem]{}, err
			}
			return toolkit.Paginate(items, a.Page), nil
		},
	})
}

func isYAML(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }

// checkYAMLSyntax parses every document; Home Assistant's tags (!include, !secret, !input…)
// are plain tags to the parser, so they pass.
func checkYAMLSyntax(text string) error {
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// replaceConfig backs the old file up, writes the new content and, when asked, lets Home
// Assistant check the result, rolling back to the old content when the check fails or
// cannot run.
// c is the call the change is kept for in ha_config_history; nil keeps nothing (a restore from the
// history, which kept the current content itself).
func replaceConfig(ctx context.Context, d Deps, c *toolkit.Call, p, content string, validate bool) (_ writeConfigResult, failed error) {
	// One write at a time: a rollback must restore what this write replaced, not another's.
	configWriteMu.Lock()
	defer configWriteMu.Unlock()
	old, info, readErr := d.Files.ReadFile(p, 0, fsguard.MaxRead)
	existed := readErr == nil
	if readErr != nil && !errors.Is(readErr, fs.ErrNotExist) {
		return writeConfigResult{}, fileError(readErr, "path")
	}
	if existed && info.Size > int64(len(old)) {
		return writeConfigResult{}, &toolkit.Error{Code: "too_large", Field: "path", Message: fmt.Sprintf("%s is %d bytes, too large to back up and restore; nothing was written", p, info.Size)}
	}
	out := writeConfigResult{Path: p, Bytes: len(content), Created: !existed}
	if c != nil {
		var before any
		change := confighistory.Created
		if existed {
			before, change = string(old), confighistory.Updated
		}
		k, err := d.keep(ctx, c, KindFile, p, path.Base(p), change, before)
		if err != nil {
			return writeConfigResult{}, err
		}
		out.Version = k.version()
		defer func() {
			// A rollback that failed left the new content in place: the kept version is what it replaced.
			if te := (*toolkit.Error)(nil); failed != nil && !(errors.As(failed, &te) && te.Code == "rollback_failed") {
				k.undo(ctx)
			}
		}()
	}
	if existed {
		backup, err := backupFile(d.Files, p, old, time.Now().UTC())
		if err != nil {
			return writeConfigResult{}, &toolkit.Error{Code: "filesystem_error", Message: "could not back up " + p + ", so nothing was written: " + err.Error()}
		}
		out.Backup = backup
	}
	res, err := d.Files.WriteFile(p, []byte(content), 0o644, fsguard.WriteOptions{CreateDirs: true})
	if err != nil {
		return writeConfigResult{}, fileError(err, "path")
	}
	out.TrashVersionID = res.PreviousVersionID
	out.Next = nextStep(p)
	if !validate {
		out.Next = "not checked (validate=false): run ha_validate_config before reloading; " + out.Next
		return out, nil
	}
	check, cerr := checkConfig(ctx, d)
	if cerr == nil && check.valid() {
		out.Check = &check
		return out, nil
	}
	if rerr := rollback(d.Files, p, old, existed); rerr != nil {
		yes := true
		return writeConfigResult{}, &toolkit.Error{Code: "rollback_failed", Changed: &yes,
			Message: "the new content failed the check and restoring the old content also failed: " + rerr.Error(),
			Hint:    "restore " + p + " from " + out.Backup + " (ha_read_config, then ha_write_config)"}
	}
	no := false
	if cerr != nil {
		te := toolkit.AsError(cerr)
		te.Message = "the configuration could not be checked, so " + p + " was restored to its previous content: " + te.Message
		te.Changed = &no
		te.Hint = "try again when Home Assistant is reachable, or pass validate=false to write without the check"
		return writeConfigResult{}, te
	}
	return writeConfigResult{}, &toolkit.Error{Code: "invalid_configuration", Field: "content", Changed: &no,
		Message: "Home Assistant's configuration check failed, so " + p + " was restored to its previous content: " + check.Errors,
		Hint:    "fix the content and write it again"}
}

func rollback(f *fsguard.FS, p string, old []byte, existed bool) error {
	if !existed {
		_, err := f.Delete(p, false)
		return err
	}
	_, err := f.WriteFile(p, old, 0o644, fsguard.WriteOptions{})
	return err
}

// nextStep says what makes an edited file take effect.
func nextStep(p string) string {
	switch path.Base(p) {
	case "automations.yaml":
		return `apply with ha_reload_config {"domain": "automation"}`
	case "scripts.yaml":
		return `apply with ha_reload_config {"domain": "script"}`
	case "scenes.yaml":
		return `apply with ha_reload_config {"domain": "scene"}`
	case "customize.yaml":
		return `apply with ha_reload_config {"domain": "core"}`
	case "groups.yaml":
		return `apply with ha_reload_config {"domain": "group"}`
	}
	if strings.Contains(p, "/themes/") {
		return `apply with ha_reload_config {"domain": "themes"}`
	}
	return `apply with ha_reload_config (the domain you changed, or "all"); integration settings in configuration.yaml need ha_restart`
}

// backupName encodes a config path and a time into a backup file name:
// packages/lights.yaml at t → packages=2Flights.yaml.20260102T030405.678Z.bak
func backupName(p string, t time.Time) string {
	rel := backupEscape.Replace(strings.TrimPrefix(p, "/config/"))
	return rel + "." + t.Format("20060102T150405.000Z") + ".bak"
}

// Backup names flatten a path into one file name. "=" escapes both itself and "/", so every
// path has exactly one name and every name one path ("a_/b" and "a/_b" stay apart).
var (
	backupEscape   = strings.NewReplacer("=", "=3D", "/", "=2F")
	backupUnescape = strings.NewReplacer("=2F", "/", "=3D", "=")
)

// parseBackupName reverses backupName.
func parseBackupName(name string) (of string, t time.Time, ok bool) {
	rest, found := strings.CutSuffix(name, ".bak")
	if !found || len(rest) < 22 || rest[len(rest)-21] != '.' {
		return "", time.Time{}, false
	}
	t, err := time.Parse("20060102T150405.000Z", rest[len(rest)-20:])
	if err != nil {
		return "", time.Time{}, false
	}
	rel := rest[:len(rest)-21]
	if rel == "" {
		return "", time.Time{}, false
	}
	return "/config/" + backupUnescape.Replace(rel), t, true
}

// backupFile writes a timestamped copy of old and prunes copies beyond keepBackups.
func backupFile(f *fsguard.FS, p string, old []byte, now time.Time) (string, error) {
	target := backupDir + "/" + backupName(p, now)
	if _, err := f.WriteFile(target, old, 0o600, fsguard.WriteOptions{CreateDirs: true}); err != nil {
		return "", err
	}
	copies, err := hamcpBackups(f, p)
	if err != nil {
		return target, nil
	}
	for _, b := range copies[min(len(copies), keepBackups):] {
		_, _ = f.Delete(b.Path, false)
	}
	return target, nil
}

// hamcpBackups lists hamcp's copies, newest first, optionally of one file.
func hamcpBackups(f *fsguard.FS, of string) ([]backupItem, error) {
	if of != "" {
		p, err := configPath("filename", of)
		if err != nil {
			return nil, err
		}
		of = p
	}
	var out []backupItem
	for offset := 0; ; offset += fsguard.MaxListLimit {
		entries, total, err := f.List(backupDir, fsguard.ListOptions{Offset: offset, Limit: fsguard.MaxListLimit})
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		if err != nil {
			return nil, fileError(err, "filename")
		}
		for _, e := range entries {
			orig, t, ok := parseBackupName(e.Name)
			if !ok || e.IsDir || (of != "" && orig != of) {
				continue
			}
			out = append(out, backupItem{Source: "hamcp", Path: e.Path, Of: orig, Date: t.Format("2006-01-02T15:04:05.000Z"), Bytes: e.Size, at: t})
		}
		if offset+len(entries) >= total || len(entries) == 0 {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.After(out[j].at) })
	return out, nil
}

// Bounds of a recursive listing: deep enough for packages/ and themes/, small enough to stay cheap.
const (
	maxListDepth   = 4
	maxListEntries = 5000
)

// skipDirs are folders of generated content nobody edits by hand.
var skipDirs = map[string]bool{".storage": true, "deps": true, "tts": true, "__pycache__": true, ".cloud": true, ".hamcp_backups": true}

// walkConfig lists a folder (recursively when asked): folders, and YAML files unless all is
// set, whose names match the glob.
func walkConfig(f *fsguard.FS, root string, a listFilesArgs) ([]fileItem, error) {
	out := []fileItem{}
	seen := 0
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		for offset := 0; ; offset += fsguard.MaxListLimit {
			entries, total, err := f.List(dir, fsguard.ListOptions{Offset: offset, Limit: fsguard.MaxListLimit, Hidden: a.Hidden})
			if err != nil {
				return fileError(err, "path")
			}
			for _, e := range entries {
				if seen++; seen > maxListEntries {
					return &toolkit.Error{Code: "too_large", Field: "path", Message: fmt.Sprintf("more than %d entries under %s", maxListEntries, root),
						Hint: "list a subfolder, add a pattern, or leave recursive off"}
				}
				match := a.Pattern == ""
				if !match {
					match, _ = path.Match(a.Pattern, e.Name)
				}
				if e.IsDir {
					if match && a.Pattern == "" {
						out = append(out, fileItem{Path: e.Path, Dir: true, Modified: e.ModTime.UTC().Format(time.RFC3339)})
					}
					if a.Recursive && depth < maxListDepth && !e.IsSymlink && !skipDirs[e.Name] {
						if err := walk(e.Path, depth+1); err != nil {
							return err
						}
					}
					continue
				}
				if match && (a.All || isYAML(e.Name)) {
					out = append(out, fileItem{Path: e.Path, Size: e.Size, Modified: e.ModTime.UTC().Format(time.RFC3339)})
				}
			}
			if offset+len(entries) >= total || len(entries) == 0 {
				return nil
			}
		}
	}
	if err := walk(root, 1); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// fileVersions is how ha_config_history restores a configuration file: written back with the same
// YAML check, Home Assistant configuration check and rollback as ha_write_config, or deleted when
// the file did not exist before.
func fileVersions() versionKind {
	return versionKind{kind: KindFile,
		read: func(ctx context.Context, d Deps, id string) (json.RawMessage, string, error) {
			if err := needFiles(d); err != nil {
				return nil, "", err
			}
			p, err := configPath("item", id)
			if err != nil {
				return nil, "", err
			}
			old, info, err := d.Files.ReadFile(p, 0, fsguard.MaxRead)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, "", nil
			}
			if err != nil {
				return nil, "", fileError(err, "item")
			}
			if info.Size > int64(len(old)) {
				return nil, "", &toolkit.Error{Code: "too_large", Field: "item", Message: fmt.Sprintf("%s is %d bytes, too large to keep before restoring; nothing was changed", p, info.Size)}
			}
			raw, err := json.Marshal(string(old))
			return raw, path.Base(p), err
		},
		check: func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage) {
			var content string
			if cfg == nil || json.Unmarshal(cfg, &content) != nil || !isYAML(id) {
				return
			}
			doc, err := yamlTree(content)
			if err != nil {
				w.hits = append(w.hits, sensitive.Unknown("the YAML does not parse, so what it does is unknown")...)
			}
			w.config(ctx, doc)
			w.yamlScenesAndGroups(ctx, doc, 0)
		},
		write: func(ctx context.Context, d Deps, id string, cfg json.RawMessage) error {
			if err := needFiles(d); err != nil {
				return err
			}
			p, err := configPath("item", id)
			if err != nil {
				return err
			}
			if err := writable(p); err != nil {
				return err
			}
			if cfg == nil {
				if _, err := d.Files.Delete(p, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fileError(err, "item")
				}
				return nil
			}
			var content string
			if err := json.Unmarshal(cfg, &content); err != nil {
				return fmt.Errorf("the kept version of %s is not file content: %w", p, err)
			}
			_, err = replaceConfig(ctx, d, nil, p, content, true)
			return err
		},
	}
}
