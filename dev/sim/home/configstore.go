package home

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// configStore holds automations.yaml (list by id), scripts.yaml (dict by
// key) and scenes.yaml (list by id) as ordered nodes.
type configStore struct {
	automations []*yaml.Node
	scripts     *yaml.Node // mapping key -> item
	scenes      []*yaml.Node
}

// ConfigError is a 400 from the config editor views: Msg is the complete
// message HA sends ("Message malformed: ...", "Key malformed: ...").
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

var configFiles = map[string]string{"automation": "automations.yaml", "script": "scripts.yaml", "scene": "scenes.yaml"}

// ConfigKinds are the config editor components the simulator serves.
func ConfigKinds() []string { return []string{"automation", "script", "scene"} }

func (h *Home) configPath(kind string) string {
	if h.cfgDir == "" {
		return ""
	}
	return filepath.Join(h.cfgDir, configFiles[kind])
}

// loadConfigs reads the three files (writing the demo versions where a file
// does not exist yet) and builds the entities.
func (h *Home) loadConfigs() error {
	h.configs = &configStore{scripts: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}}
	for _, kind := range ConfigKinds() {
		if p := h.configPath(kind); p != "" {
			if _, err := os.Stat(p); os.IsNotExist(err) {
				if err := ensureDir(h.cfgDir); err != nil {
					return err
				}
				if err := writeAtomic(p, []byte(demoConfigs[kind])); err != nil {
					return err
				}
			}
		}
		if err := h.readConfig(kind); err != nil {
			return err
		}
		h.syncConfigEntities(kind, h.newContext("", nil))
	}
	return nil
}

// readConfig loads one file from disk (or the demo text when in memory).
func (h *Home) readConfig(kind string) error {
	var raw []byte
	if p := h.configPath(kind); p != "" {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		raw = b
	} else if !h.loaded[kind] {
		raw = []byte(demoConfigs[kind])
	} else {
		return nil // in memory: the nodes are the truth
	}
	root, err := parseYAMLRoot(raw)
	if err != nil {
		return &HAError{Msg: fmt.Sprintf("Error loading %s: %v", configFiles[kind], err)}
	}
	switch kind {
	case "script":
		if root == nil {
			root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		if root.Kind != yaml.MappingNode {
			return &HAError{Msg: fmt.Sprintf("Error loading %s: expected a dictionary", configFiles[kind])}
		}
		h.configs.scripts = root
	default:
		var items []*yaml.Node
		if root != nil {
			if root.Kind != yaml.SequenceNode {
				return &HAError{Msg: fmt.Sprintf("Error loading %s: expected a list", configFiles[kind])}
			}
			items = root.Content
		}
		if items == nil {
			items = []*yaml.Node{}
		}
		if kind == "automation" {
			h.configs.automations = items
		} else {
			h.configs.scenes = items
		}
	}
	h.loaded[kind] = true
	return nil
}

// parseYAMLRoot returns the document's top node, nil for an empty file.
func parseYAMLRoot(raw []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// writeConfig rewrites a file atomically (temp file + fsync + rename).
func (h *Home) writeConfig(kind string) error {
	p := h.configPath(kind)
	if p == "" {
		return nil
	}
	var root *yaml.Node
	switch kind {
	case "script":
		root = h.configs.scripts
	case "automation":
		root = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: h.configs.automations}
	default:
		root = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: h.configs.scenes}
	}
	var buf bytes.Buffer
	if len(root.Content) == 0 {
		if kind == "script" {
			buf.WriteString("{}\n")
		} else {
			buf.WriteString("[]\n")
		}
	} else {
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(root); err != nil {
			return err
		}
		_ = enc.Close()
	}
	return writeAtomic(p, buf.Bytes())
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

func (h *Home) list(kind string) *[]*yaml.Node {
	if kind == "automation" {
		return &h.configs.automations
	}
	return &h.configs.scenes
}

func idIndex(items []*yaml.Node, key string) int {
	for i, it := range items {
		if mapString(it, "id") == key {
			return i
		}
	}
	return -1
}

// ConfigItem is GET /api/config/<kind>/config/<key>: the stored item as
// ordered JSON.
func (h *Home) ConfigItem(kind, key string) (json.RawMessage, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := configFiles[kind]; !ok {
		return nil, false
	}
	var n *yaml.Node
	if kind == "script" {
		n = mapGet(h.configs.scripts, key)
	} else if i := idIndex(*h.list(kind), key); i >= 0 {
		n = (*h.list(kind))[i]
	}
	if n == nil {
		return nil, false
	}
	raw, err := NodeJSON(n)
	return raw, err == nil
}

// PutConfigItem is POST /api/config/<kind>/config/<key>: validate, write
// the file atomically, reload the domain.
func (h *Home) PutConfigItem(kind, key string, body []byte, userID string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	if _, ok := configFiles[kind]; !ok {
		return &NotFoundError{Msg: "Resource not found"}
	}
	if !json.Valid(body) {
		return &ConfigError{Msg: "Invalid JSON specified"}
	}
	node, err := jsonToNode(body)
	if err != nil {
		return &ConfigError{Msg: "Invalid JSON specified"}
	}
	if kind == "script" && slugify(key) != key {
		return &ConfigError{Msg: fmt.Sprintf("Key malformed: invalid slug %s (try %s)", key, slugify(key))}
	}
	// script/config.py _SCRIPT_OBJECT_ID_SCHEMA: these names are the script domain's own services.
	if kind == "script" && (key == "reload" || key == "toggle" || key == "turn_off" || key == "turn_on") {
		return &ConfigError{Msg: "Message malformed: A script's object_id must not be one of reload, toggle, turn_off, turn_on"}
	}
	if node.Kind != yaml.MappingNode {
		return &ConfigError{Msg: "Message malformed: expected a dictionary"}
	}
	if err := validateConfigItem(kind, node); err != nil {
		return &ConfigError{Msg: "Message malformed: " + err.Error()}
	}
	switch kind {
	case "script":
		if v := mapGet(h.configs.scripts, key); v != nil {
			*v = *node
		} else {
			h.configs.scripts.Content = append(h.configs.scripts.Content, strNode(key), node)
		}
	default:
		order := []string{"alias", "description", "triggers", "trigger", "conditions", "condition", "actions", "action"}
		if kind == "scene" {
			order = []string{"name", "icon", "entities"}
		}
		item := orderedMapping(node, []*yaml.Node{strNode("id"), strNode(key)}, order)
		items := h.list(kind)
		if i := idIndex(*items, key); i >= 0 {
			(*items)[i] = item
		} else {
			*items = append(*items, item)
		}
	}
	if err := h.writeConfig(kind); err != nil {
		return &HAError{Msg: "Error writing " + configFiles[kind] + ": " + err.Error()}
	}
	h.syncConfigEntities(kind, h.newContext(userID, nil))
	return nil
}

// DeleteConfigItem is DELETE /api/config/<kind>/config/<key>.
func (h *Home) DeleteConfigItem(kind, key, userID string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	if _, ok := configFiles[kind]; !ok {
		return &NotFoundError{Msg: "Resource not found"}
	}
	found := false
	if kind == "script" {
		c := h.configs.scripts.Content
		for i := 0; i+1 < len(c); i += 2 {
			if c[i].Value == key {
				h.configs.scripts.Content = append(c[:i:i], c[i+2:]...)
				found = true
				break
			}
		}
	} else {
		items := h.list(kind)
		if i := idIndex(*items, key); i >= 0 {
			*items = append((*items)[:i:i], (*items)[i+1:]...)
			found = true
		}
	}
	if !found {
		return &NotFoundError{Msg: "Resource not found"}
	}
	if err := h.writeConfig(kind); err != nil {
		return &HAError{Msg: "Error writing " + configFiles[kind] + ": " + err.Error()}
	}
	h.syncConfigEntities(kind, h.newContext(userID, nil))
	return nil
}

// reloadLocked re-reads a file from disk (picking up edits made through the
// filesystem) and refreshes the entities, as <domain>.reload does.
func (h *Home) reloadLocked(kind string, c *call) error {
	if err := h.readConfig(kind); err != nil {
		h.Log("error", "homeassistant.components."+kind, "%v", err)
		return err
	}
	h.syncConfigEntities(kind, c.ctx)
	return nil
}

func (h *Home) reloadAllLocked(c *call) error {
	for _, k := range ConfigKinds() {
		if err := h.reloadLocked(k, c); err != nil {
			return err
		}
	}
	return nil
}

// slugify is HA's slugify with "_" as separator, for ASCII input; other
// characters become separators.
func slugify(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
		default:
			sep = true
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// Slugify is slugify for other packages (area ids, entity ids).
func Slugify(s string) string { return slugify(s) }
