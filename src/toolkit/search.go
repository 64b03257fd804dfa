package toolkit

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Field weights of a tool's text for ranking: a word in the name says more about what a tool is
// for than the same word in an argument's description.
const (
	weightName     = 3.0
	weightTitle    = 2.0
	weightArgName  = 1.5
	weightText     = 1.0 // the description and argument values (enums)
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
	tool *Tool
	tf   map[string]float64
	len  float64
	name map[string]bool // the terms of the tool's name
	core bool
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
		d := searchDoc{tool: t, tf: map[string]float64{}, name: map[string]bool{}, core: slices.Contains(core, t.def.Name)}
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
		add(withoutExamples(withoutToolNames(def.Description, names)), weightText)
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

type hit struct {
	tool  *Tool
	score float64
}

// search returns the best n tools for the query, best first; ties go by name so results are stable.
// A tool named in the query outright comes first.
func (ix *index) search(query string, n int) []hit {
	terms := queryTerms(query)
	named := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(query)) {
		named[strings.Trim(w, "`'\",.;:()")] = true
	}
	N := float64(len(ix.docs))
	var hits []hit
	for _, d := range ix.docs {
		score := 0.0
		for _, q := range terms {
			tf := d.tf[q]
			if tf == 0 {
				continue
			}
			df := float64(ix.df[q])
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			norm := 1 - bm25B + bm25B*d.len/ix.avgLen
			score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
			if d.name[q] {
				// A word of the name says what the tool is for, whatever its description repeats.
				score += nameBoost * idf
			}
		}
		switch {
		case d.core:
			score *= corePrior
		case d.tool.readOnly:
			score *= readOnlyPrior
		}
		if len(d.tool.grants) == 0 {
			score *= openPrior
		}
		if named[d.tool.def.Name] {
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
