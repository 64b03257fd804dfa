package home

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Blueprint-based automations and scripts ("use_blueprint": {path, input})
// run the blueprint's body from <config>/blueprints/<domain>/<path> with
// every "!input name" replaced by the given input or the blueprint default.

// effectiveConfig is the config an entity actually runs.
func (h *Home) effectiveConfig(ce configEntity) (map[string]any, error) {
	cfg, _ := nodeValue(ce.node).(map[string]any)
	use, ok := cfg["use_blueprint"].(map[string]any)
	if !ok {
		return cfg, nil
	}
	path, _ := use["path"].(string)
	inputs, _ := use["input"].(map[string]any)
	body, err := h.loadBlueprint(ce.kind, path, inputs)
	if err != nil {
		return nil, err
	}
	for k, v := range cfg {
		if k != "use_blueprint" {
			body[k] = v
		}
	}
	return body, nil
}

func (h *Home) loadBlueprint(domain, path string, inputs map[string]any) (map[string]any, error) {
	if h.cfgDir == "" {
		return nil, &HAError{Msg: "Blueprints need a config directory"}
	}
	clean := filepath.Clean(path)
	if path == "" || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, &HAError{Msg: fmt.Sprintf("Invalid blueprint path %q", path)}
	}
	raw, err := os.ReadFile(filepath.Join(h.cfgDir, "blueprints", domain, clean))
	if err != nil {
		return nil, &HAError{Msg: fmt.Sprintf("Failed to load blueprint: Unable to find %s", path)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &HAError{Msg: fmt.Sprintf("Failed to load blueprint %s: invalid YAML", path)}
	}
	root := doc.Content[0]
	meta := mapGet(root, "blueprint")
	defaults := map[string]any{}
	for name, spec := range mappingOf(mapGet(meta, "input")) {
		if d := mapGet(spec, "default"); d != nil {
			defaults[name] = nodeValue(d)
		}
	}
	var missing []string
	var subst func(n *yaml.Node, depth int) any
	subst = func(n *yaml.Node, depth int) any {
		if depth > maxDepth {
			return nil
		}
		switch {
		case n.Tag == "!input":
			if v, ok := inputs[n.Value]; ok {
				return v
			}
			if v, ok := defaults[n.Value]; ok {
				return v
			}
			missing = append(missing, n.Value)
			return nil
		case n.Kind == yaml.MappingNode:
			m := map[string]any{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				m[n.Content[i].Value] = subst(n.Content[i+1], depth+1)
			}
			return m
		case n.Kind == yaml.SequenceNode:
			l := make([]any, len(n.Content))
			for i, c := range n.Content {
				l[i] = subst(c, depth+1)
			}
			return l
		case n.Kind == yaml.AliasNode && n.Alias != nil:
			return subst(n.Alias, depth+1)
		}
		return nodeValue(n)
	}
	body := map[string]any{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i].Value; k != "blueprint" {
			body[k] = subst(root.Content[i+1], 0)
		}
	}
	if len(missing) > 0 {
		return nil, &HAError{Msg: fmt.Sprintf("Missing input %s", strings.Join(missing, ", "))}
	}
	return body, nil
}

func mappingOf(n *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil || n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = n.Content[i+1]
	}
	return out
}
