package hatools

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlTree reads every document of a YAML text into plain maps, lists and strings, ignoring tags
// (Home Assistant's !include, !secret, !input), so no tag can hide an action from the walk. A key given
// twice in one mapping is an error: which value Home Assistant keeps is not for the walk to guess.
func yamlTree(text string) (any, error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var docs []any
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		r := yamlReader{budget: maxYAMLNodes}
		docs = append(docs, r.plain(&n, 0))
		if r.err != nil {
			return docs, r.err
		}
	}
}

// maxYAMLNodes bounds the walk, so aliases that expand exponentially cost nothing.
const maxYAMLNodes = 200_000

type yamlReader struct {
	budget int
	err    error
	// inputs, when set, replace a blueprint's !input tags (confirm_blueprint.go).
	inputs map[string]any
}

func (r *yamlReader) plain(n *yaml.Node, depth int) any {
	r.budget--
	switch {
	case n == nil || r.err != nil:
		return nil
	case r.budget < 0 || depth > 200:
		r.err = errors.New("too many nodes (aliases expand too far) or nested too deep")
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return r.plain(n.Content[0], depth+1)
		}
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := m[k]; dup {
				r.err = fmt.Errorf("line %d: key %q given twice", n.Content[i].Line, k)
				return nil
			}
			m[k] = r.plain(n.Content[i+1], depth+1)
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			l = append(l, r.plain(c, depth+1))
		}
		return l
	case yaml.AliasNode:
		return r.plain(n.Alias, depth+1)
	case yaml.ScalarNode:
		if r.inputs != nil && n.Tag == "!input" {
			if v, ok := r.inputs[n.Value]; ok {
				return v
			}
			return "{{ input " + n.Value + " }}" // no value: what it becomes is unknown
		}
		return n.Value
	}
	return nil
}
