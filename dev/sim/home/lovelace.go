package home

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"go.yaml.in/yaml/v3"
)

// Dashboards (homeassistant/components/lovelace): a storage collection of dashboards
// (.storage/lovelace_dashboards, items {id, url_path, title, icon?, require_admin, show_in_sidebar,
// mode: storage}), one config per storage dashboard (.storage/lovelace.<id>, data {"config": …}), the
// legacy default dashboard (.storage/lovelace, url_path None), dashboards from configuration.yaml's
// lovelace: dashboards: (mode yaml, read-only), and the resources collection
// (.storage/lovelace_resources). Since 2026.1 (core PR #158265) a default dashboard saved in
// .storage/lovelace is migrated at start to a dashboard entry with url_path and id "lovelace"; the
// demo home starts in that migrated form.

// LovelaceError is an error the lovelace WebSocket handlers send with their own code:
// config_not_found, or error (a HomeAssistantError such as "Not supported").
type LovelaceError struct{ Code, Msg string }

func (e *LovelaceError) Error() string { return e.Msg }

const (
	lovelaceDefaultKey = "lovelace"            // CONFIG_STORAGE_KEY_DEFAULT
	dashboardsKey      = "lovelace_dashboards" // DASHBOARDS_STORAGE_KEY
	resourcesKey       = "lovelace_resources"  // RESOURCE_STORAGE_KEY
	defaultDashIcon    = "hass:view-dashboard" // DEFAULT_ICON
)

// builtinPanels are the frontend panels a dashboard's url_path may not take (DATA_PANELS).
var builtinPanels = []string{"lovelace", "energy", "map", "logbook", "history", "config", "developer-tools",
	"profile", "todo", "media-browser", "calendar", "hassio", "light", "security", "climate"}

type lovelaceStore struct {
	mu        sync.Mutex
	dir       string           // the config dir's .storage ("" in memory)
	cfgDir    string           // for YAML dashboards' files
	yaml      []map[string]any // dashboards from configuration.yaml, as their panel config
	items     []map[string]any // the storage collection, in creation order
	configs   map[string]any   // storage key -> config (absent: never saved)
	resources []map[string]any
}

var (
	lovelaceMu    sync.Mutex
	lovelaceHomes = map[weak.Pointer[Home]]*lovelaceStore{}
)

// lovelaceInit loads the dashboards (writing the demo's files into a config dir that has none),
// so .storage holds them from the start, as in a running Home Assistant.
func (h *Home) lovelaceInit() error {
	_, err := h.lovelace()
	return err
}

// lovelace returns the home's dashboards, loading them on first use.
func (h *Home) lovelace() (*lovelaceStore, error) {
	key := weak.Make(h)
	lovelaceMu.Lock()
	defer lovelaceMu.Unlock()
	if s, ok := lovelaceHomes[key]; ok {
		return s, nil
	}
	s := &lovelaceStore{configs: map[string]any{}, cfgDir: h.cfgDir}
	if h.cfgDir != "" {
		s.dir = filepath.Join(h.cfgDir, ".storage")
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	lovelaceHomes[key] = s
	runtime.AddCleanup(h, func(k weak.Pointer[Home]) {
		lovelaceMu.Lock()
		delete(lovelaceHomes, k)
		lovelaceMu.Unlock()
	}, key)
	return s, nil
}

func (s *lovelaceStore) load() error {
	if s.dir == "" {
		s.seedDemo()
		return nil
	}
	if _, err := os.Stat(filepath.Join(s.dir, dashboardsKey)); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(s.dir, lovelaceDefaultKey)); errors.Is(err, os.ErrNotExist) {
			s.seedDemo()
			return s.saveAll()
		}
	}
	var dash struct {
		Items []map[string]any `json:"items"`
	}
	if _, err := s.read(dashboardsKey, &dash); err != nil {
		return err
	}
	s.items = dash.Items
	var res struct {
		Items []map[string]any `json:"items"`
	}
	if _, err := s.read(resourcesKey, &res); err != nil {
		return err
	}
	s.resources = res.Items
	keys := []string{lovelaceDefaultKey}
	for _, it := range s.items {
		keys = append(keys, "lovelace."+lvStr(it["id"]))
	}
	for _, k := range keys {
		var data struct {
			Config any `json:"config"`
		}
		found, err := s.read(k, &data)
		if err != nil {
			return err
		}
		if found && data.Config != nil {
			s.configs[k] = data.Config
		}
	}
	s.yaml = yamlDashboards(s.cfgDir)
	return s.migrateDefault()
}

// migrateDefault is _async_migrate_default_config: a saved default dashboard becomes the
// dashboard entry "lovelace".
func (s *lovelaceStore) migrateDefault() error {
	cfg, ok := s.configs[lovelaceDefaultKey]
	if !ok || slices.ContainsFunc(s.items, func(it map[string]any) bool { return it["url_path"] == "lovelace" }) {
		return nil
	}
	if _, exists := s.configs["lovelace.lovelace"]; exists {
		return nil // both files: HA logs a warning and leaves them
	}
	s.items = append(s.items, map[string]any{"id": "lovelace", "require_admin": false, "icon": defaultDashIcon,
		"title": "Overview", "show_in_sidebar": true, "url_path": "lovelace", "mode": "storage"})
	s.configs["lovelace.lovelace"] = cfg
	delete(s.configs, lovelaceDefaultKey)
	return s.saveAll()
}

// read decodes one .storage document's data; found is false when the file does not exist.
func (s *lovelaceStore) read(key string, data any) (found bool, err error) {
	b, err := os.ReadFile(filepath.Join(s.dir, key))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var doc struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return false, fmt.Errorf("reading .storage/%s: %w", key, err)
	}
	return true, json.Unmarshal(doc.Data, data)
}

// write stores one document in Store's envelope; nil data removes the file (Store.async_remove).
func (s *lovelaceStore) write(key string, data any) error {
	if s.dir == "" {
		return nil
	}
	p := filepath.Join(s.dir, key)
	if data == nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(map[string]any{"version": 1, "minor_version": 1, "key": key, "data": data}, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(p, append(b, '\n'))
}

func (s *lovelaceStore) saveAll() error {
	if err := s.saveItems(); err != nil {
		return err
	}
	if err := s.write(resourcesKey, map[string]any{"items": nonNilItems(s.resources)}); err != nil {
		return err
	}
	keys := slices.Sorted(maps.Keys(s.configs))
	for _, k := range keys {
		if err := s.write(k, map[string]any{"config": s.configs[k]}); err != nil {
			return err
		}
	}
	if _, ok := s.configs[lovelaceDefaultKey]; !ok {
		return s.write(lovelaceDefaultKey, nil)
	}
	return nil
}

func (s *lovelaceStore) saveItems() error {
	return s.write(dashboardsKey, map[string]any{"items": nonNilItems(s.items)})
}

func nonNilItems(items []map[string]any) []map[string]any {
	if items == nil {
		return []map[string]any{}
	}
	return items
}

// yamlDashboards reads lovelace: dashboards: from configuration.yaml (YAML_DASHBOARD_SCHEMA:
// mode yaml, filename, title, icon, show_in_sidebar, require_admin), in file order.
func yamlDashboards(cfgDir string) []map[string]any {
	b, err := os.ReadFile(filepath.Join(cfgDir, "configuration.yaml"))
	if err != nil {
		return nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	dashes := mappingValue(mappingValue(doc.Content[0], "lovelace"), "dashboards")
	if dashes == nil || dashes.Kind != yaml.MappingNode {
		return nil
	}
	var out []map[string]any
	for i := 0; i+1 < len(dashes.Content); i += 2 {
		var conf map[string]any
		if dashes.Content[i+1].Decode(&conf) != nil || conf["mode"] != "yaml" || lvStr(conf["filename"]) == "" || lvStr(conf["title"]) == "" {
			continue // CONFIG_SCHEMA refuses it: HA would not start the integration with it
		}
		conf["url_path"] = dashes.Content[i].Value
		if _, ok := conf["show_in_sidebar"]; !ok {
			conf["show_in_sidebar"] = true
		}
		if _, ok := conf["require_admin"]; !ok {
			conf["require_admin"] = false
		}
		out = append(out, conf)
	}
	return out
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func lvStr(v any) string { s, _ := v.(string); return s }

// dashboard finds what lovelace/config and friends address: nil url_path is the legacy default;
// storageKey is "" for a YAML dashboard.
func (s *lovelaceStore) dashboard(urlPath *string) (storageKey string, yamlConf map[string]any, err error) {
	if urlPath == nil {
		return lovelaceDefaultKey, nil, nil
	}
	for _, c := range s.yaml {
		if c["url_path"] == *urlPath {
			return "", c, nil
		}
	}
	for _, it := range s.items {
		if it["url_path"] == *urlPath {
			return "lovelace." + lvStr(it["id"]), nil, nil
		}
	}
	return "", nil, &LovelaceError{Code: "config_not_found", Msg: "Unknown config specified: " + *urlPath}
}

// LovelaceDashboards is lovelace/dashboards/list: every dashboard's panel config (YAML ones
// first, then the storage collection), url_path included; the legacy default is not listed.
func (h *Home) LovelaceDashboards() ([]map[string]any, error) {
	s, err := h.lovelace()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, c := range s.yaml {
		out = append(out, maps.Clone(c))
	}
	for _, it := range s.items {
		out = append(out, maps.Clone(it))
	}
	return out, nil
}

// CreateLovelaceDashboard is lovelace/dashboards/create after the command's schema: data holds
// url_path, title and the optional fields; the defaults are filled here.
func (h *Home) CreateLovelaceDashboard(data map[string]any) (map[string]any, error) {
	s, err := h.lovelace()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	urlPath := lvStr(data["url_path"])
	single, _ := data["allow_single_word"].(bool)
	switch {
	case !single && !strings.Contains(urlPath, "-"):
		s.mu.Unlock()
		return nil, &InvalidError{Msg: "Url path needs to contain a hyphen (-)"}
	case slices.Contains(builtinPanels, urlPath) || s.urlTaken(urlPath):
		s.mu.Unlock()
		return nil, &InvalidError{Msg: "Panel url path needs to be unique"}
	}
	id := freeID(slugify(urlPath), func(c string) bool {
		return slices.ContainsFunc(s.items, func(it map[string]any) bool { return it["id"] == c })
	})
	item := map[string]any{"id": id, "require_admin": false, "show_in_sidebar": true, "mode": "storage"}
	for k, v := range data {
		if k != "allow_single_word" {
			item[k] = v
		}
	}
	s.items = append(s.items, item)
	err = s.saveItems()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	h.FireEvent("panels_updated", nil, "LOCAL", "")
	return maps.Clone(item), nil
}

func (s *lovelaceStore) urlTaken(urlPath string) bool {
	taken := func(c map[string]any) bool { return c["url_path"] == urlPath }
	return slices.ContainsFunc(s.items, taken) || slices.ContainsFunc(s.yaml, taken)
}

// UpdateLovelaceDashboard is lovelace/dashboards/update: the given fields replace the item's; an
// icon of null removes it.
func (h *Home) UpdateLovelaceDashboard(id string, data map[string]any) (map[string]any, error) {
	s, err := h.lovelace()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.items, func(it map[string]any) bool { return it["id"] == id })
	if i < 0 {
		s.mu.Unlock()
		return nil, &NotFoundError{Msg: "Unable to find dashboard_id " + id}
	}
	item := maps.Clone(s.items[i])
	for k, v := range data {
		item[k] = v
	}
	if v, ok := item["icon"]; ok && v == nil {
		delete(item, "icon")
	}
	s.items[i] = item
	err = s.saveItems()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	h.FireEvent("panels_updated", nil, "LOCAL", "")
	return maps.Clone(item), nil
}

// DeleteLovelaceDashboard is lovelace/dashboards/delete: the entry, its panel and its stored
// config go (lovelace_updated is fired for the config).
func (h *Home) DeleteLovelaceDashboard(id string) error {
	s, err := h.lovelace()
	if err != nil {
		return err
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.items, func(it map[string]any) bool { return it["id"] == id })
	if i < 0 {
		s.mu.Unlock()
		return &NotFoundError{Msg: "Unable to find dashboard_id " + id}
	}
	urlPath := lvStr(s.items[i]["url_path"])
	s.items = slices.Delete(s.items, i, i+1)
	key := "lovelace." + id
	delete(s.configs, key)
	err = errors.Join(s.saveItems(), s.write(key, nil))
	s.mu.Unlock()
	if err != nil {
		return err
	}
	h.FireEvent("panels_updated", nil, "LOCAL", "")
	h.FireEvent("lovelace_updated", map[string]any{"url_path": urlPath}, "LOCAL", "")
	return nil
}

// LovelaceConfig is lovelace/config: the stored config of a storage dashboard, or a YAML
// dashboard's file; none saved is config_not_found "No config found." (the frontend then
// generates the default dashboard itself).
func (h *Home) LovelaceConfig(urlPath *string) (any, error) {
	s, err := h.lovelace()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key, yamlConf, err := s.dashboard(urlPath)
	if err != nil {
		return nil, err
	}
	if yamlConf != nil {
		return s.yamlFile(yamlConf)
	}
	cfg, ok := s.configs[key]
	if !ok {
		return nil, &LovelaceError{Code: "config_not_found", Msg: "No config found."}
	}
	return cloneJSON(cfg), nil
}

// yamlFile loads a YAML dashboard's file (load_yaml_dict); a missing file is ConfigNotFound.
func (s *lovelaceStore) yamlFile(conf map[string]any) (any, error) {
	b, err := os.ReadFile(filepath.Join(s.cfgDir, lvStr(conf["filename"])))
	if err != nil {
		return nil, &LovelaceError{Code: "config_not_found", Msg: "No config found."}
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil || v == nil {
		return nil, &LovelaceError{Code: "error", Msg: "YAML file " + lvStr(conf["filename"]) + " does not contain a dict"}
	}
	return cloneJSON(v), nil
}

// SaveLovelaceConfig is lovelace/config/save: a storage dashboard's config is replaced whole
// (a dict, or a string, which HA stores as given); a YAML dashboard refuses.
func (h *Home) SaveLovelaceConfig(urlPath *string, cfg any) error {
	return h.changeLovelaceConfig(urlPath, cfg, true)
}

// DeleteLovelaceConfig is lovelace/config/delete: the stored config goes, so the dashboard
// is empty again (the default one auto-generated).
func (h *Home) DeleteLovelaceConfig(urlPath *string) error {
	return h.changeLovelaceConfig(urlPath, nil, false)
}

func (h *Home) changeLovelaceConfig(urlPath *string, cfg any, save bool) error {
	s, err := h.lovelace()
	if err != nil {
		return err
	}
	s.mu.Lock()
	key, yamlConf, err := s.dashboard(urlPath)
	if err == nil && yamlConf != nil {
		err = &LovelaceError{Code: "error", Msg: "Not supported"}
	}
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if save {
		s.configs[key] = cloneJSON(cfg)
		err = s.write(key, map[string]any{"config": s.configs[key]})
	} else {
		delete(s.configs, key)
		err = s.write(key, nil)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	var up any
	if urlPath != nil {
		up = *urlPath
	}
	h.FireEvent("lovelace_updated", map[string]any{"url_path": up}, "LOCAL", "")
	return nil
}

// LovelaceResources is lovelace/resources: {id, type, url} per resource.
func (h *Home) LovelaceResources() ([]map[string]any, error) {
	s, err := h.lovelace()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, r := range s.resources {
		out = append(out, maps.Clone(r))
	}
	return out, nil
}

// cloneJSON deep-copies a JSON value, so callers never share the stored one.
func cloneJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return nil
	}
	return out
}
