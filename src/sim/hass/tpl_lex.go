package hass

import (
	"fmt"
	"strings"
)

// The template engine is an honest subset of Jinja as Home Assistant uses it:
// {{ }}, {% if/elif/else %}, {% for %} (with loop.*, else and an inline if
// filter), {% set %} (incl. namespace attributes), {% raw %}, comments,
// whitespace control, filters, tests, HA's state/area functions. Anything
// else is a TemplateSyntaxError, like Jinja would raise for unknown syntax.

// TemplateError is HA's TemplateError: Kind is the underlying exception
// class (TemplateSyntaxError, UndefinedError, TypeError, ValueError, ...).
type TemplateError struct {
	Kind, Msg string
}

func (e *TemplateError) Error() string { return e.Kind + ": " + e.Msg }

func syntaxErr(format string, args ...any) error {
	return &TemplateError{Kind: "TemplateSyntaxError", Msg: fmt.Sprintf(format, args...)}
}

type tokKind int

const (
	tkName tokKind = iota
	tkInt
	tkFloat
	tkStr
	tkOp
	tkEnd // end of the tag
)

type token struct {
	kind tokKind
	s    string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tkEnd:
		return "end of statement block"
	case tkStr:
		return "string"
	case tkInt, tkFloat:
		return t.s
	}
	return t.s
}

// item is a piece of template source: literal text, or a tag with its tokens.
type item struct {
	kind   byte // 't' text, 'o' output {{ }}, 's' statement {% %}
	text   string
	tokens []token
	pos    int
}

const maxTemplateLen = 256 << 10

// lexTemplate splits the source into text and tags, applying whitespace control.
func lexTemplate(src string) ([]item, error) {
	if len(src) > maxTemplateLen {
		return nil, &TemplateError{Kind: "TemplateError", Msg: "template too large"}
	}
	var items []item
	i := 0
	stripNext := false
	for i < len(src) {
		j := nextTagStart(src, i)
		text := src[i:j]
		if stripNext {
			text = strings.TrimLeft(text, " \t\r\n")
			stripNext = false
		}
		if j >= len(src) {
			if text != "" {
				items = append(items, item{kind: 't', text: text, pos: i})
			}
			break
		}
		open := src[j : j+2]
		k := j + 2
		if k < len(src) && src[k] == '-' {
			text = strings.TrimRight(text, " \t\r\n")
			k++
		} else if k < len(src) && src[k] == '+' {
			k++
		}
		if text != "" {
			items = append(items, item{kind: 't', text: text, pos: i})
		}
		if open == "{#" {
			end := strings.Index(src[k:], "#}")
			if end < 0 {
				return nil, syntaxErr("Missing end of comment tag")
			}
			if end > 0 && src[k+end-1] == '-' {
				stripNext = true
			}
			i = k + end + 2
			continue
		}
		closer := "}}"
		kind := byte('o')
		if open == "{%" {
			closer, kind = "%}", 's'
		}
		toks, next, strip, err := lexTag(src, k, closer)
		if err != nil {
			return nil, err
		}
		stripNext = strip
		if kind == 's' && len(toks) > 1 && toks[0].kind == tkName && toks[0].s == "raw" && toks[1].kind == tkEnd {
			body, after, err := rawBlock(src, next)
			if err != nil {
				return nil, err
			}
			items = append(items, item{kind: 't', text: body, pos: next})
			i = after
			continue
		}
		items = append(items, item{kind: kind, tokens: toks, pos: j})
		i = next
	}
	return items, nil
}

func nextTagStart(src string, i int) int {
	for j := i; j+1 < len(src); j++ {
		if src[j] == '{' && (src[j+1] == '{' || src[j+1] == '%' || src[j+1] == '#') {
			return j
		}
	}
	return len(src)
}

// rawBlock returns the text up to {% endraw %}.
func rawBlock(src string, i int) (string, int, error) {
	for j := i; j < len(src); {
		k := strings.Index(src[j:], "{%")
		if k < 0 {
			break
		}
		start := j + k
		toks, next, _, err := lexTag(src, start+2, "%}")
		if err == nil && len(toks) == 2 && toks[0].s == "endraw" {
			return src[i:start], next, nil
		}
		j = start + 2
	}
	return "", 0, syntaxErr("Unexpected end of template. Jinja was looking for the following tags: 'endraw'. The innermost block that needs to be closed is 'raw'.")
}

var ops2 = []string{"==", "!=", "<=", ">=", "//", "**"}

// lexTag tokenizes a tag's expression up to its closer, string-aware.
func lexTag(src string, i int, closer string) ([]token, int, bool, error) {
	var toks []token
	depth := 0 // open brackets: like Jinja, "}}" inside a dict literal does not end the tag
	for {
		for i < len(src) && strings.ContainsRune(" \t\r\n", rune(src[i])) {
			i++
		}
		if i >= len(src) {
			what := "end of print statement"
			if closer == "%}" {
				what = "end of statement block"
			}
			return nil, 0, false, syntaxErr("unexpected end of template, expected '%s'.", what)
		}
		if depth == 0 {
			if strings.HasPrefix(src[i:], "-"+closer) {
				return append(toks, token{kind: tkEnd, pos: i}), i + 3, true, nil
			}
			if strings.HasPrefix(src[i:], "+"+closer) {
				return append(toks, token{kind: tkEnd, pos: i}), i + 3, false, nil
			}
			if strings.HasPrefix(src[i:], closer) {
				return append(toks, token{kind: tkEnd, pos: i}), i + 2, false, nil
			}
		}
		c := src[i]
		switch {
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tkName, s: src[i:j], pos: i})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j, isFloat := i, false
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_') {
				j++
			}
			if j < len(src) && src[j] == '.' && j+1 < len(src) && src[j+1] >= '0' && src[j+1] <= '9' {
				isFloat = true
				j++
				for j < len(src) && src[j] >= '0' && src[j] <= '9' {
					j++
				}
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					isFloat = true
					j = k
					for j < len(src) && src[j] >= '0' && src[j] <= '9' {
						j++
					}
				}
			}
			kind := tkInt
			if isFloat {
				kind = tkFloat
			}
			toks = append(toks, token{kind: kind, s: strings.ReplaceAll(src[i:j], "_", ""), pos: i})
			i = j
		case c == '\'' || c == '"':
			s, j, err := lexString(src, i)
			if err != nil {
				return nil, 0, false, err
			}
			toks = append(toks, token{kind: tkStr, s: s, pos: i})
			i = j
		default:
			op := ""
			for _, o := range ops2 {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" && strings.ContainsRune("+-*/%~|.,:()[]{}=<>!", rune(c)) {
				op = string(c)
			}
			if op == "" || op == "!" {
				return nil, 0, false, syntaxErr("unexpected char %s at %d", pyQuote(string(c)), i)
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth > 0 {
					depth--
				}
			}
			toks = append(toks, token{kind: tkOp, s: op, pos: i})
			i += len(op)
		}
	}
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

// lexString reads a Python/Jinja string literal with backslash escapes.
func lexString(src string, i int) (string, int, error) {
	q := src[i]
	var b strings.Builder
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == q:
			return b.String(), j + 1, nil
		case c == '\\' && j+1 < len(src):
			j++
			switch src[j] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(src[j])
			default:
				b.WriteByte('\\')
				b.WriteByte(src[j])
			}
			j++
		default:
			b.WriteByte(c)
			j++
		}
	}
	return "", 0, syntaxErr("unexpected char %s at %d", pyQuote(string(q)), i)
}
