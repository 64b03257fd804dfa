package home

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Config items are kept as yaml.Nodes so key order survives the trip
// JSON request → YAML file → JSON response, as it does in HA (Python dicts
// keep insertion order).

// jsonToNode decodes one JSON value into a yaml.Node, keeping object key order.
func jsonToNode(raw []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := decodeNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return n, nil
}

const maxDepth = 64

func decodeNode(dec *json.Decoder, depth int) (*yaml.Node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, strNode(k), v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return strNode(t), nil
	case json.Number:
		if _, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: string(t)}, nil
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: string(t)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// nodeJSON writes a node as JSON in its own key order.
func nodeJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("YAML nested too deeply")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return nodeJSON(b, n.Content[0], depth+1)
	case yaml.AliasNode:
		return nodeJSON(b, n.Alias, depth+1)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, n.Content[i].Value)
			b.WriteByte(':')
			if err := nodeJSON(b, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := nodeJSON(b, c, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		var v any
		if err := n.Decode(&v); err != nil {
			v = n.Value
		}
		raw, err := json.Marshal(jsonable(v))
		if err != nil {
			raw, _ = json.Marshal(n.Value)
		}
		b.Write(raw)
	}
	return nil
}

// NodeJSON is nodeJSON into a fresh buffer.
func NodeJSON(n *yaml.Node) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := nodeJSON(&b, n, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// jsonable converts what yaml decodes (map[string]any, time.Time, ...) into
// something encoding/json accepts.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonable(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	}
	return v
}

// nodeValue decodes a node into plain Go values (map[string]any, []any, ...).
func nodeValue(n *yaml.Node) any {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil
	}
	return jsonable(v)
}

// mapGet returns the value node of key in a mapping node.
func mapGet(n *yaml.Node, key string) *yaml.Node {
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

func mapString(n *yaml.Node, key string) string {
	if v := mapGet(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// orderedMapping builds {first keys..., then the rest in their own order}
// the way HA's _write_value orders automation and scene items.
func orderedMapping(src *yaml.Node, lead []*yaml.Node, order []string) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	seen := map[string]bool{}
	for i := 0; i+1 < len(lead); i += 2 {
		out.Content = append(out.Content, lead[i], lead[i+1])
		seen[lead[i].Value] = true
	}
	for _, k := range order {
		if v := mapGet(src, k); v != nil && !seen[k] {
			out.Content = append(out.Content, strNode(k), v)
			seen[k] = true
		}
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		if !seen[src.Content[i].Value] {
			out.Content = append(out.Content, src.Content[i], src.Content[i+1])
			seen[src.Content[i].Value] = true
		}
	}
	return out
}
