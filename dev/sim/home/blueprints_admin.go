package home

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Blueprints on disk: <config>/blueprints/<domain>/<path>.yaml, listed,
// imported and saved the way HA's blueprint integration does. The simulator
// has no internet, so imports resolve a few known URLs from embedded YAML
// (blueprint_sources_admin.go) and fail elsewhere as a fetch would.

// BlueprintDomains are the domains HA keeps blueprints for.
var BlueprintDomains = []string{"automation", "script"}

// AlreadyExistsError is blueprint/save refusing to replace a file (WS code already_exists).
type AlreadyExistsError struct{ Msg string }

func (e *AlreadyExistsError) Error() string { return e.Msg }

// FetchError is a download that failed; HA reports it as unknown_error
// without its text.
type FetchError struct{ Msg string }

func (e *FetchError) Error() string { return e.Msg }

// OSError is a file that could not be written (WS unknown_error with its text).
type OSError struct{ Msg string }

func (e *OSError) Error() string { return e.Msg }

// Blueprints is blueprint/list: relative path → {"metadata": {...}} or
// {"error": "..."} for files that do not load. Unknown domains list nothing.
func (h *Home) Blueprints(domain string) map[string]any {
	out := map[string]any{}
	if h.cfgDir == "" || !slices.Contains(BlueprintDomains, domain) {
		return out
	}
	root := filepath.Join(h.cfgDir, "blueprints", domain)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		raw, err := os.ReadFile(p)
		if err != nil {
			out[rel] = map[string]any{"error": fmt.Sprintf("Failed to load blueprint: %v", err)}
			return nil
		}
		meta, err := blueprintMetadata(raw, domain)
		if err != nil {
			out[rel] = map[string]any{"error": err.Error()}
			return nil
		}
		out[rel] = map[string]any{"metadata": meta}
		return nil
	})
	return out
}

// parseBlueprint checks BLUEPRINT_SCHEMA's essentials and returns the
// document's root mapping. expected "" accepts any supported domain.
func parseBlueprint(raw []byte, expected string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, &HAError{Msg: fmt.Sprintf("Invalid blueprint: %v", err)}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &HAError{Msg: "Invalid blueprint: expected a dictionary"}
	}
	root := doc.Content[0]
	meta := mapGet(root, "blueprint")
	switch {
	case meta == nil:
		return nil, &HAError{Msg: "Invalid blueprint: required key not provided @ data['blueprint']. Got None"}
	case meta.Kind != yaml.MappingNode:
		return nil, &HAError{Msg: "Invalid blueprint: expected a dictionary for dictionary value @ data['blueprint']"}
	case mapString(meta, "name") == "":
		return nil, &HAError{Msg: "Invalid blueprint: required key not provided @ data['blueprint']['name']. Got None"}
	case mapString(meta, "domain") == "":
		return nil, &HAError{Msg: "Invalid blueprint: required key not provided @ data['blueprint']['domain']. Got None"}
	}
	if in := mapGet(meta, "input"); in != nil && in.Kind != yaml.MappingNode {
		return nil, &HAError{Msg: "Invalid blueprint: expected a dictionary for dictionary value @ data['blueprint']['input']"}
	}
	if d := mapString(meta, "domain"); expected != "" && d != expected {
		return nil, &HAError{Msg: fmt.Sprintf("Invalid blueprint: Found incorrect blueprint type %s, expected %s", d, expected)}
	}
	return root, nil
}

func blueprintMetadata(raw []byte, expected string) (map[string]any, error) {
	root, err := parseBlueprint(raw, expected)
	if err != nil {
		return nil, err
	}
	meta, _ := nodeValue(mapGet(root, "blueprint")).(map[string]any)
	return meta, nil
}

// ImportedBlueprint is blueprint/import's result.
type ImportedBlueprint struct {
	SuggestedFilename string         `json:"suggested_filename"`
	RawData           string         `json:"raw_data"`
	Blueprint         map[string]any `json:"blueprint"`
	ValidationErrors  []string       `json:"validation_errors"`
	Exists            bool           `json:"exists"`
}

// ImportBlueprint fetches a blueprint by URL. A URL HA has no importer for
// is an HAError ("Unsupported URL"), one that cannot be fetched a
// FetchError, a document that is no blueprint an HAError, and a blueprint
// for another domain an InvalidError ("Unsupported domain").
func (h *Home) ImportBlueprint(rawURL string) (ImportedBlueprint, error) {
	src, suggested, err := blueprintSource(rawURL)
	if err != nil {
		return ImportedBlueprint{}, err
	}
	text, ok := demoBlueprintSources[src]
	if !ok {
		return ImportedBlueprint{}, &FetchError{Msg: "404, message='Not Found', url='" + src + "'"}
	}
	root, err := parseBlueprint([]byte(text), "")
	if err != nil {
		return ImportedBlueprint{}, err
	}
	meta, _ := nodeValue(mapGet(root, "blueprint")).(map[string]any)
	meta["source_url"] = rawURL
	domain, _ := meta["domain"].(string)
	if !slices.Contains(BlueprintDomains, domain) {
		return ImportedBlueprint{}, &InvalidError{Msg: "Unsupported domain"}
	}
	exists := false
	if h.cfgDir != "" {
		_, statErr := os.Stat(filepath.Join(h.cfgDir, "blueprints", domain, filepath.FromSlash(suggested)+".yaml"))
		exists = statErr == nil
	}
	return ImportedBlueprint{SuggestedFilename: suggested, RawData: text, Blueprint: map[string]any{"metadata": meta}, Exists: exists}, nil
}

// blueprintSource maps an import URL to the URL HA would download and the
// suggested file name (author/name), as HA's importers do for GitHub,
// GitHub raw and generic .yaml URLs.
func blueprintSource(raw string) (src, suggested string, err error) {
	u, perr := url.Parse(raw)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", &HAError{Msg: "Unsupported URL"}
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	base := parts[len(parts)-1]
	switch {
	case u.Host == "github.com" && len(parts) >= 5 && parts[2] == "blob" && strings.HasSuffix(base, ".yaml"):
		src = "https://raw.githubusercontent.com/" + parts[0] + "/" + parts[1] + "/" + strings.Join(parts[3:], "/")
		return src, parts[0] + "/" + strings.TrimSuffix(base, ".yaml"), nil
	case u.Host == "raw.githubusercontent.com" && len(parts) >= 4 && strings.HasSuffix(base, ".yaml"):
		return "https://" + u.Host + u.Path, parts[0] + "/" + strings.TrimSuffix(base, ".yaml"), nil
	case strings.HasSuffix(base, ".yaml"):
		return raw, u.Hostname() + "/" + strings.TrimSuffix(base, ".yaml"), nil
	}
	return "", "", &HAError{Msg: "Unsupported URL"}
}

// SaveBlueprint is blueprint/save: write <domain>/<path>(.yaml) with
// source_url set, refusing to replace a file unless allowOverride. It
// reports whether a file was replaced.
func (h *Home) SaveBlueprint(domain, path, text, sourceURL string, allowOverride bool) (bool, error) {
	if !slices.Contains(BlueprintDomains, domain) {
		return false, &InvalidError{Msg: "Unsupported domain"}
	}
	root, err := parseBlueprint([]byte(text), domain)
	if err != nil {
		return false, &InvalidError{Msg: err.Error()}
	}
	if h.cfgDir == "" {
		return false, &HAError{Msg: "Blueprints need a config directory"}
	}
	clean := filepath.Clean(filepath.FromSlash(path))
	if path == "" || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return false, &InvalidError{Msg: fmt.Sprintf("not a valid path for dictionary value @ data['path']. Got '%s'", path)}
	}
	if !strings.HasSuffix(clean, ".yaml") {
		clean += ".yaml"
	}
	if sourceURL != "" {
		setBlueprintSource(root, sourceURL)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return false, &HAError{Msg: err.Error()}
	}
	_ = enc.Close()
	target := filepath.Join(h.cfgDir, "blueprints", domain, clean)
	_, statErr := os.Stat(target)
	exists := statErr == nil
	if exists && !allowOverride {
		return false, &AlreadyExistsError{Msg: "File already exists"}
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return false, &OSError{Msg: err.Error()}
	}
	if err := writeAtomic(target, buf.Bytes()); err != nil {
		return false, &OSError{Msg: err.Error()}
	}
	h.Log("info", "homeassistant.components.blueprint", "Saved blueprint %s/%s", domain, filepath.ToSlash(clean))
	return exists, nil
}

func setBlueprintSource(root *yaml.Node, sourceURL string) {
	meta := mapGet(root, "blueprint")
	if v := mapGet(meta, "source_url"); v != nil {
		v.Kind, v.Tag, v.Value, v.Content = yaml.ScalarNode, "!!str", sourceURL, nil
		return
	}
	meta.Content = append(meta.Content, strNode("source_url"), strNode(sourceURL))
}
