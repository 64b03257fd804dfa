package home

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CheckResult is /api/config/core/check_config's body.
type CheckResult struct {
	Result   string  `json:"result"`
	Errors   *string `json:"errors"`
	Warnings *string `json:"warnings"`
}

// CheckConfig validates configuration.yaml and the three editor files as
// HA's check_config does (YAML syntax, then each item's schema).
func (h *Home) CheckConfig() CheckResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.checkConfigLocked()
	out := CheckResult{Result: r.Result}
	if r.Errors != "" {
		out.Errors = strp(r.Errors)
	}
	return out
}

type checkResult struct{ Result, Errors string }

func (h *Home) checkConfigLocked() checkResult {
	var errs []string
	if h.cfgDir != "" {
		p := filepath.Join(h.cfgDir, "configuration.yaml")
		if raw, err := os.ReadFile(p); err == nil {
			var doc yaml.Node
			if err := yaml.Unmarshal(raw, &doc); err != nil {
				errs = append(errs, fmt.Sprintf("Error loading %s: %v", p, err))
			}
		}
	}
	for _, kind := range ConfigKinds() {
		file := configFiles[kind]
		var root *yaml.Node
		if p := h.configPath(kind); p != "" {
			raw, err := os.ReadFile(p)
			if err != nil && !os.IsNotExist(err) {
				errs = append(errs, fmt.Sprintf("Error loading %s: %v", p, err))
				continue
			}
			root, err = parseYAMLRoot(raw)
			if err != nil {
				errs = append(errs, fmt.Sprintf("Error loading %s: %v", p, err))
				continue
			}
		} else if kind == "script" {
			root = h.configs.scripts
		} else {
			root = &yaml.Node{Kind: yaml.SequenceNode, Content: *h.list(kind)}
		}
		if root == nil {
			continue
		}
		var items []*yaml.Node
		switch {
		case kind == "script" && root.Kind == yaml.MappingNode:
			for i := 1; i < len(root.Content); i += 2 {
				items = append(items, root.Content[i])
			}
		case kind != "script" && root.Kind == yaml.SequenceNode:
			items = root.Content
		default:
			errs = append(errs, fmt.Sprintf("Invalid config for '%s' at %s: expected a %s", kind, file, map[bool]string{true: "dictionary", false: "list"}[kind == "script"]))
			continue
		}
		for _, it := range items {
			if err := validateConfigItem(kind, it); err != nil {
				errs = append(errs, fmt.Sprintf("Invalid config for '%s' at %s, line %d: %v, please check the docs at https://www.home-assistant.io/integrations/%s", kind, file, it.Line, err, kind))
			}
		}
	}
	if len(errs) > 0 {
		return checkResult{Result: "invalid", Errors: strings.Join(errs, "\n")}
	}
	return checkResult{Result: "valid"}
}
