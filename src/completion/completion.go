// Package completion answers MCP completion/complete for the prompts and resource templates the
// toolsets declare. Each toolset describes its own prompts and templates in a Set (which
// arguments have a finite domain and where the values come from); Handler joins the Sets into
// the server's one completion handler. It checks the ref, so completing an argument of a prompt
// or template the server does not have is a JSON-RPC invalid-params error, and it always answers
// an array, ranked and capped the same way for every argument.
package completion

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxValues is the most values one answer carries (the limit the MCP spec sets).
const MaxValues = 100

// Candidate is one possible value. Label, when set, is a human name matched as well (an entity's
// friendly name, an area's name), so typing "kitchen" finds light.k_1 named "Kitchen lamp".
type Candidate struct {
	Value string
	Label string
}

// Source lists every candidate of one argument. resolved holds the arguments the client has
// already filled in (completion context), e.g. the domain when completing a service.
type Source func(ctx context.Context, resolved map[string]string) ([]Candidate, error)

// Values is a Source over a fixed list.
func Values(vs ...string) Source {
	c := make([]Candidate, len(vs))
	for i, v := range vs {
		c[i] = Candidate{Value: v}
	}
	return func(context.Context, map[string]string) ([]Candidate, error) { return c, nil }
}

// Set declares the prompts and resource templates of one toolset. A prompt or template with no
// completable argument is still declared, so completing one of its free-text arguments answers
// an empty list instead of an unknown-ref error.
type Set struct {
	prompts   map[string]map[string]Source
	templates map[string]map[string]Source
}

// NewSet returns an empty Set.
func NewSet() *Set {
	return &Set{prompts: map[string]map[string]Source{}, templates: map[string]map[string]Source{}}
}

// Prompt declares a prompt and the sources of its arguments that have a finite domain (args may
// be nil).
func (s *Set) Prompt(name string, args map[string]Source) *Set {
	s.prompts[name] = args
	return s
}

// Template declares a resource template (by its URI template) and the sources of its variables.
func (s *Set) Template(uriTemplate string, vars map[string]Source) *Set {
	s.templates[uriTemplate] = vars
	return s
}

// Handler returns the completion/complete handler over every set; a later set's declaration of
// the same prompt or template wins.
func Handler(sets ...*Set) func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		p := req.Params
		if p == nil || p.Ref == nil {
			return nil, invalid("ref is required: {\"type\":\"ref/prompt\",\"name\":…} or {\"type\":\"ref/resource\",\"uri\":…}")
		}
		args, err := lookup(sets, p.Ref)
		if err != nil {
			return nil, err
		}
		src := args[p.Argument.Name]
		if src == nil {
			return result(nil, p.Argument.Value), nil
		}
		var resolved map[string]string
		if p.Context != nil {
			resolved = p.Context.Arguments
		}
		cands, err := src(ctx, resolved)
		if err != nil {
			// A backend that cannot answer right now is no reason to fail the user's typing.
			cands = nil
		}
		return result(cands, p.Argument.Value), nil
	}
}

func lookup(sets []*Set, ref *mcp.CompleteReference) (map[string]Source, error) {
	var (
		args  map[string]Source
		found bool
	)
	for _, s := range sets {
		var a map[string]Source
		var ok bool
		switch ref.Type {
		case "ref/prompt":
			a, ok = s.prompts[ref.Name]
		case "ref/resource":
			a, ok = s.templates[ref.URI]
		default:
			return nil, invalid(fmt.Sprintf("ref.type %q is not ref/prompt or ref/resource", ref.Type))
		}
		if ok {
			args, found = a, true
		}
	}
	if found {
		return args, nil
	}
	if ref.Type == "ref/prompt" {
		return nil, invalid(fmt.Sprintf("no prompt named %q; prompts/list shows the prompts", ref.Name))
	}
	return nil, invalid(fmt.Sprintf("no resource template %q; resources/templates/list shows the templates", ref.URI))
}

func invalid(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

func result(cands []Candidate, typed string) *mcp.CompleteResult {
	values, total := Rank(cands, typed, MaxValues)
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: total, HasMore: total > len(values)}}
}

// Rank returns the values matching typed (case-insensitive), best first: values that start
// with it, then values or labels with a word that starts with it (light.kitchen and "Kitchen
// lamp" for "kit"), then values or labels that contain it; each group sorted. At most max are
// returned, with how many matched in all. The list is never nil.
func Rank(cands []Candidate, typed string, max int) ([]string, int) {
	q := strings.ToLower(strings.TrimSpace(typed))
	seen := make(map[string]bool, len(cands))
	var tiers [3][]string
	for _, c := range cands {
		if c.Value == "" || seen[c.Value] {
			continue
		}
		v, l := strings.ToLower(c.Value), strings.ToLower(c.Label)
		switch {
		case strings.HasPrefix(v, q):
			tiers[0] = append(tiers[0], c.Value)
		case wordPrefix(v, q) || wordPrefix(l, q):
			tiers[1] = append(tiers[1], c.Value)
		case strings.Contains(v, q) || (l != "" && strings.Contains(l, q)):
			tiers[2] = append(tiers[2], c.Value)
		default:
			continue
		}
		seen[c.Value] = true
	}
	out := []string{}
	for _, t := range tiers {
		sort.Strings(t)
		out = append(out, t...)
	}
	total := len(out)
	if len(out) > max {
		out = out[:max]
	}
	return out, total
}

// wordPrefix reports whether a word of s (split at dots, underscores, spaces and dashes)
// starts with q.
func wordPrefix(s, q string) bool {
	if q == "" || s == "" {
		return false
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '_' || r == ' ' || r == '-' }) {
		if strings.HasPrefix(w, q) {
			return true
		}
	}
	return false
}
