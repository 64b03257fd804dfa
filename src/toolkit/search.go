package toolkit

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Field weights of a tool's text for ranking: a word in the name says more about what a tool is
// for than the same word in an argument's description. A description's first sentence says what
// the tool does; the rest says when to use another, what needs the user's yes and what it costs,
// and names things the tool is not about ("the user confirms unlock, garage door open").
const (
	weightName     = 3.0
	weightTitle    = 2.0
	weightArgName  = 1.5
	weightText     = 1.0 // the description's first sentence and argument values (enums)
	weightDetail   = 0.4 // the rest of the description
	weightArgDescr = 0.5
)

// nameBoost adds a query term's idf once more when the tool's name holds it.
const nameBoost = 1.0

// Priors on otherwise close scores: the core tools are what most requests need; between a tool that
// changes something and one that does not, the safe one goes first, and between one that needs the
// user's permission and one that does not, the one that works without asking.
const (
	corePrior     = 1.2
	readOnlyPrior = 1.1
	openPrior     = 1.1
)

// Priors from what a request wants done (intentOf) against what a tool does. A request that
// changes nothing wants a tool that reads, and a destructive tool is the last it should meet; a
// request that changes something wants a tool that changes. A tool of another system than Home
// Assistant (hubitat_…) goes after Home Assistant's unless the request names that system or a hub:
// "lock the front door" is about the home's lock, whichever hub it sits on.
const (
	readWritePrior   = 0.6  // a read request, a tool that cannot read
	readDestroyPrior = 0.35 // a read request, a destructive tool that cannot read
	readMixedPrior   = 0.7  // a read request, a tool with read actions next to destructive ones
	changeReadPrior  = 0.7  // a change request, a read-only tool
	otherSystemPrior = 0.25 // a tool of a system the request does not name
)

// readActions are the values of an action argument that read: a tool with one serves read
// requests too ("list my helpers" is ha_manage_helpers' list).
var readActions = []string{"list", "lists", "get", "info", "read", "show", "search", "status", "history", "versions", "diff"}

// BM25 parameters (the usual ones).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// index ranks tools for a query with BM25 over weighted term frequencies (BM25F with per-field
// weights folded into one bag of terms): names, titles, descriptions, argument names,
// descriptions and enum values.
type index struct {
	docs   []searchDoc
	df     map[string]int
	avgLen float64
}

type searchDoc struct {
	tool        *Tool
	tf          map[string]float64
	len         float64
	name        map[string]bool // the terms of the tool's name
	core        bool
	reads       bool   // read-only, or has an action that reads
	destructive bool   // may destroy or overwrite (annotation)
	system      string // the system a tool outside Home Assistant belongs to (hubitat), else ""
}

// withoutToolNames drops the names of tools from a description: "reads go to ha_query_sql" says
// what the tool is not for, and must not make it a match for "query sql".
func withoutToolNames(text string, names map[string]bool) string {
	return toolNameRE.ReplaceAllStringFunc(text, func(w string) string {
		if names[w] {
			return " "
		}
		return w
	})
}

// withoutExamples drops quoted examples and templates from a description: "carries out commands
// like \"turn off the kitchen lights\"" is about talking to Assist, not about kitchens or lights.
func withoutExamples(text string) string {
	return exampleRE.ReplaceAllString(text, " ")
}

var exampleRE = regexp.MustCompile(`"[^"]*"|“[^”]*”|\{\{.*?\}\}|\{%.*?%\}`)

var toolNameRE = regexp.MustCompile(`[a-z][a-z0-9]*(?:_[a-z0-9]+)+`)

func newIndex(tools []*Tool, core []string) *index {
	ix := &index{df: map[string]int{}}
	names := map[string]bool{}
	for _, t := range tools {
		names[t.def.Name] = true
	}
	total := 0.0
	for _, t := range tools {
		d := searchDoc{tool: t, tf: map[string]float64{}, name: map[string]bool{}, core: slices.Contains(core, t.def.Name),
			reads: t.readOnly || hasReadAction(t), system: systemOf(t.def.Name)}
		if a := t.def.Annotations; a != nil && a.DestructiveHint != nil {
			d.destructive = *a.DestructiveHint && !t.readOnly
		}
		add := func(text string, w float64) {
			for _, term := range tokenize(text) {
				d.tf[term] += w
				d.len += w
			}
		}
		def := t.def
		add(def.Name, weightName)
		for _, term := range tokenize(def.Name) {
			d.name[term] = true
		}
		add(def.Title, weightTitle)
		purpose, detail := splitPurpose(withoutExamples(withoutToolNames(def.Description, names)))
		add(purpose, weightText)
		add(detail, weightDetail)
		if schema := t.inputSchema(); schema != nil {
			for name, p := range schema.Properties {
				add(name, weightArgName)
				if p == nil {
					continue
				}
				descr, _, _ := strings.Cut(p.Description, "e.g.") // an argument's examples are values, not purposes
				add(withoutExamples(withoutToolNames(descr, names)), weightArgDescr)
				for _, e := range p.Enum {
					if s, ok := e.(string); ok {
						add(s, weightText)
					}
				}
			}
		}
		for term := range d.tf {
			ix.df[term]++
		}
		total += d.len
		ix.docs = append(ix.docs, d)
	}
	if len(ix.docs) > 0 {
		ix.avgLen = total / float64(len(ix.docs))
	}
	return ix
}

// splitPurpose cuts a description after its first sentence.
func splitPurpose(text string) (string, string) {
	if i := strings.Index(text, ". "); i >= 0 {
		return text[:i+1], text[i+2:]
	}
	return text, ""
}

type hit struct {
	tool  *Tool
	score float64
}

// search returns the best n tools for the query, best first; ties go by name so results are stable.
// A tool named in the query outright comes first.
func (ix *index) search(query string, n int) []hit {
	raw := rawWords(query)
	in := intentOf(raw)
	terms := expand(queryTerms(query), raw, in)
	words := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(query)) {
		w = strings.Trim(w, "`'\",.;:()")
		words[w], words[strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")] = true, true // the hub's: hub
	}
	if sys := systemNamedBy(query); sys != "" {
		words[sys] = true
	}
	N := float64(len(ix.docs))
	var hits []hit
	for _, d := range ix.docs {
		score := 0.0
		for _, q := range terms {
			tf := d.tf[q.term]
			if tf == 0 {
				continue
			}
			df := float64(ix.df[q.term])
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			norm := 1 - bm25B + bm25B*d.len/ix.avgLen
			s := idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
			if d.name[q.term] {
				// A word of the name says what the tool is for, whatever its description repeats.
				s += nameBoost * idf
			}
			score += q.weight * s
		}
		score *= d.prior(in, words)
		if words[d.tool.def.Name] {
			score += 1000
		}
		if score > 0 {
			hits = append(hits, hit{tool: d.tool, score: score})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].tool.def.Name < hits[j].tool.def.Name
	})
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits
}

// prior is what the tool's kind makes of a match: core and safe tools first, tools that do what
// the request wants done before those that do not, Home Assistant's before another system's.
func (d *searchDoc) prior(in intent, words map[string]bool) float64 {
	p := 1.0
	switch {
	case d.core:
		p *= corePrior
	case d.tool.readOnly:
		p *= readOnlyPrior
	}
	if len(d.tool.grants) == 0 {
		p *= openPrior
	}
	switch {
	case in.change:
		if d.tool.readOnly {
			p *= changeReadPrior
		}
	case d.tool.readOnly:
	case !d.reads && d.destructive:
		p *= readDestroyPrior
	case !d.reads:
		p *= readWritePrior
	case d.destructive: // reads among other actions, some destructive
		p *= readMixedPrior
	}
	if d.system != "" && !words[d.system] && !words["hub"] && !words["hubs"] {
		p *= otherSystemPrior
	}
	return p
}

// systemVocabulary is what only one other system has: a request about a private boolean or the
// HSM names Hubitat as surely as one that says "hubitat". Only proper names and terms no Home
// Assistant tool uses belong here; "rename" or "arm" are everyone's.
var systemVocabulary = map[string][]string{
	"hubitat": {"rule machine", "private boolean", "hsm", "maker api", "hub variable", "hub variables", "room lighting", "button controller", "basic rule", "basic rules"},
}

// systemNamedBy is the system whose vocabulary the query uses, "" for none. The query is compared
// word by word, so "HSM's" and "hsm," count and "chsm" does not.
func systemNamedBy(query string) string {
	if len(query) > maxQueryBytes {
		query = query[:maxQueryBytes] // as queryTerms reads it; a cut rune is only not a letter
	}
	q := " " + strings.Join(strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ") + " "
	for sys, phrases := range systemVocabulary {
		for _, p := range phrases {
			if strings.Contains(q, " "+p+" ") {
				return sys
			}
		}
	}
	return ""
}

// systemOf is the system a tool belongs to when it is not Home Assistant's or hamcp's own: the
// first word of its name (hubitat_send_command: hubitat).
func systemOf(name string) string {
	first, _, ok := strings.Cut(name, "_")
	if !ok || first == "ha" || first == "hamcp" {
		return ""
	}
	return first
}

// hasReadAction reports a tool whose action argument has a value that reads.
func hasReadAction(t *Tool) bool {
	schema := t.inputSchema()
	if schema == nil || schema.Properties["action"] == nil {
		return false
	}
	for _, e := range schema.Properties["action"].Enum {
		if s, ok := e.(string); ok && slices.Contains(readActions, s) {
			return true
		}
	}
	return false
}

// A search answer carries the best tools' full definitions while it stays under searchFullBudget,
// the first always, and the rest by name, title and first sentence: the model runs one of the
// first few, and searching a tool's exact name returns its definition first. So an answer stays
// under 8 KB at the largest limit (full definitions of a whole page were 14 KB).
const (
	searchFullBudget = 6 << 10
	briefMax         = 120 // bytes of a brief entry's description
)

// foundTool is one tool of a search answer. A full one has the fields of tools/list's entry; a
// brief one has no inputSchema and no annotations.
type foundTool struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description"`
	InputSchema any                  `json:"inputSchema,omitempty"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// answer is the search answer's tools for hits, best first: full definitions as long as the
// answer fits, then brief ones.
func answer(hits []hit) []foundTool {
	out := make([]foundTool, len(hits))
	size := 0
	for i, h := range hits {
		out[i] = brief(h.tool)
		size += jsonSize(out[i])
	}
	for i, h := range hits {
		def := h.tool.Definition()
		full := foundTool{Name: def.Name, Title: def.Title, Description: def.Description, InputSchema: def.InputSchema, Annotations: def.Annotations}
		grown := size - jsonSize(out[i]) + jsonSize(full)
		if i > 0 && grown > searchFullBudget {
			break
		}
		out[i], size = full, grown
	}
	return out
}

// brief is a tool by name, title and the first sentence of its description.
func brief(t *Tool) foundTool {
	return foundTool{Name: t.def.Name, Title: t.def.Title, Description: firstSentence(t.def.Description, briefMax)}
}

// firstSentence is the text up to its first full stop, cut at a word within max bytes.
func firstSentence(text string, max int) string {
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i+1]
	}
	if len(text) <= max {
		return text
	}
	cut := strings.LastIndexByte(text[:max+1], ' ') // a word ending at max stays whole
	if cut <= 0 {
		cut = max
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
	}
	return strings.TrimRight(text[:cut], " ,;:") + "…"
}

func jsonSize(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
