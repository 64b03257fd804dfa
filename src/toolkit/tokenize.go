package toolkit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of what one search looks at: a query is a few words, not a document.
const (
	maxQueryBytes  = 500
	maxQueryTokens = 32
	maxTokenBytes  = 40
)

// stopWords carry no meaning for finding a tool; dropping them keeps "turn on the light" about
// turning and lights.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": true, "for": true,
	"and": true, "or": true, "is": true, "it": true, "my": true, "me": true, "i": true, "with": true,
	"by": true, "at": true, "be": true, "this": true, "that": true, "from": true, "as": true,
	"all": true, "any": true, "some": true, "please": true, "can": true, "you": true, "how": true,
	"do": true, "does": true, "what": true, "which": true, "tool": true, "tools": true, "ha": true,
}

// tokenize splits text into search terms: lower-case runs of letters and digits (underscores,
// dots and dashes separate, so ha_read_file is "read" and "file"), stop words dropped, each
// reduced by stem. It never returns an empty term.
func tokenize(text string) []string {
	var out []string
	appendTerms(&out, text, -1)
	return out
}

// queryTerms is tokenize for a model's query: bounded in bytes and terms, duplicates dropped
// (BM25 weighs a term once per query).
func queryTerms(q string) []string {
	if len(q) > maxQueryBytes {
		q = q[:maxQueryBytes]
		for !utf8.ValidString(q) { // do not cut a rune in half
			q = q[:len(q)-1]
		}
	}
	var terms []string
	appendTerms(&terms, q, maxQueryTokens)
	seen := map[string]bool{}
	out := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func appendTerms(out *[]string, text string, max int) {
	add := func(f string) bool {
		if max >= 0 && len(*out) >= max {
			return false
		}
		f = strings.ToLower(f)
		if len(f) <= maxTokenBytes && !stopWords[f] {
			*out = append(*out, stem(f))
		}
		return true
	}
	// Words joined by hyphens count apart and together: "add-on" meets both "add" and "addons".
	for _, word := range strings.FieldsFunc(text, func(r rune) bool { return r != '-' && !isWordRune(r) }) {
		parts := strings.FieldsFunc(word, func(r rune) bool { return r == '-' })
		for _, p := range parts {
			if !add(p) {
				return
			}
		}
		if len(parts) > 1 && !add(strings.Join(parts, "")) {
			return
		}
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// stem strips the common English endings so that "lights", "reading" and "entities" meet "light",
// "read" and "entity". It is deliberately light (no dictionary): the same function runs over the
// tools and the query, so a crude stem still matches itself.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return undouble(w[:n-2])
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:n-1]
	}
	return w
}

// undouble turns "runn" (from running) into "run" and "stopp" into "stop".
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && w[n-1] != 'l' && w[n-1] != 's' && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}
