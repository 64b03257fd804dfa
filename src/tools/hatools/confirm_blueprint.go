package hatools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// An automation or script made from a blueprint does what the blueprint's actions do with the
// inputs it gives: the walk reads the blueprint from Home Assistant's blueprints folder and puts the
// inputs in, as Home Assistant does when it loads one (homeassistant/components/blueprint/models.py,
// BlueprintInputs.async_substitute). A blueprint hamcp cannot read counts as unknown.

type blueprintUse struct {
	path   string
	inputs map[string]any
}

// blueprintOf reports whether cfg is a blueprint instance.
func (w *walk) blueprintOf(cfg any) (blueprintUse, bool) {
	m, _ := cfg.(map[string]any)
	ub, ok := m["use_blueprint"].(map[string]any)
	if !ok {
		return blueprintUse{}, false
	}
	p, _ := ub["path"].(string)
	in, _ := ub["input"].(map[string]any)
	return blueprintUse{path: p, inputs: in}, true
}

// maxBlueprintBytes bounds a blueprint file read for a decision.
const maxBlueprintBytes = 512 << 10

// expandBlueprint reads the blueprint and returns its body with the inputs substituted.
func (w *walk) expandBlueprint(ctx context.Context, bp blueprintUse) (any, error) {
	clean := path.Clean("/" + bp.path)[1:]
	if bp.path == "" || clean != bp.path || strings.HasPrefix(clean, "..") || !isYAML(clean) {
		return nil, errors.New("its path " + bp.path + " is not a blueprint file name")
	}
	if w.d.Files == nil {
		return nil, errors.New("hamcp has no access to Home Assistant's configuration folder")
	}
	var text []byte
	var err error
	for _, domain := range []string{"automation", "script"} {
		if text, _, err = w.d.Files.ReadFile("/config/blueprints/"+domain+"/"+clean, 0, maxBlueprintBytes); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(text)
	w.fact("blueprint", clean, hex.EncodeToString(sum[:]))
	return substituteInputs(string(text), bp.inputs)
}

// substituteInputs parses a blueprint and replaces each !input with the value given, else the
// input's default; an input with neither becomes a template, which the walk counts as unknown.
func substituteInputs(text string, given map[string]any) (any, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		return nil, err
	}
	plain := yamlReader{budget: maxYAMLNodes}
	whole, _ := plain.plain(&root, 0).(map[string]any)
	if plain.err != nil {
		return nil, plain.err
	}
	inputs := map[string]any{}
	meta, _ := whole["blueprint"].(map[string]any)
	collectDefaults(meta["input"], inputs, 0)
	for k, v := range given {
		inputs[k] = v
	}
	r := yamlReader{budget: maxYAMLNodes, inputs: inputs}
	out := r.plain(&root, 0)
	return out, r.err
}

// collectDefaults reads the blueprint's declared inputs (in sections too) and their defaults.
func collectDefaults(v any, into map[string]any, depth int) {
	m, _ := v.(map[string]any)
	if depth > 3 {
		return
	}
	for name, decl := range m {
		d, _ := decl.(map[string]any)
		if section, ok := d["input"]; ok { // an input section groups inputs
			collectDefaults(section, into, depth+1)
			continue
		}
		if def, ok := d["default"]; ok {
			into[name] = def
		}
	}
}
