package tplguard

import (
	"fmt"
	"strconv"
	"strings"
)

// ---- lexer ----

type tokKind uint8

const (
	tkName tokKind = iota
	tkInt
	tkFloat
	tkString
	tkOp
	tkEnd
)

type token struct {
	kind tokKind
	text string // name, operator, or the string literal's decoded text
	ival int64
	big  bool // integer literal beyond int64
	fval float64
	line int
}

// tag is one {{ ... }} (expr) or {% ... %} (statement).
type tag struct {
	stmt bool
	toks []token
	line int
}

func (g *tplGuard) fail(format string, args ...any) {
	panic(&guardError{msg: fmt.Sprintf(format, args...)})
}

func (g *tplGuard) syntax(format string, args ...any) {
	panic(&guardError{msg: fmt.Sprintf(format, args...), syntax: true})
}

// lex splits the template into tags; text, comments and {% raw %} blocks are skipped.
func (g *tplGuard) lex() []tag {
	src := g.src
	var tags []tag
	line := 1
	i := 0
	for i < len(src) {
		j := strings.IndexByte(src[i:], '{')
		if j < 0 {
			break
		}
		line += strings.Count(src[i:i+j], "\n")
		i += j
		if i+1 >= len(src) {
			break
		}
		switch src[i+1] {
		case '#':
			k := strings.Index(src[i+2:], "#}")
			if k < 0 {
				g.syntax("has a comment opened at line %d and never closed with #}", line)
			}
			line += strings.Count(src[i:i+2+k], "\n")
			i += 2 + k + 2
		case '{', '%':
			stmt := src[i+1] == '%'
			start := line
			i += 2
			if i < len(src) && (src[i] == '-' || src[i] == '+') {
				i++
			}
			toks, n, nl := g.lexTag(src[i:], stmt, line)
			line += nl
			i += n
			tags = append(tags, tag{stmt: stmt, toks: toks, line: start})
			if stmt && len(toks) == 2 && toks[0].kind == tkName && toks[0].text == "raw" {
				n, nl := skipRaw(src[i:])
				if n < 0 {
					g.syntax("has {%% raw %%} at line %d without {%% endraw %%}", start)
				}
				line += nl
				i += n
			}
		default:
			i++
		}
	}
	return tags
}

// skipRaw returns how far past {% endraw %} the text goes, or -1.
func skipRaw(s string) (n, lines int) {
	for k := 0; ; {
		j := strings.Index(s[k:], "{%")
		if j < 0 {
			return -1, 0
		}
		p := k + j + 2
		q := p
		if q < len(s) && (s[q] == '-' || s[q] == '+') {
			q++
		}
		for q < len(s) && isSpace(s[q]) {
			q++
		}
		if strings.HasPrefix(s[q:], "endraw") {
			q += len("endraw")
			for q < len(s) && isSpace(s[q]) {
				q++
			}
			if q < len(s) && (s[q] == '-' || s[q] == '+') {
				q++
			}
			if strings.HasPrefix(s[q:], "%}") {
				return q + 2, strings.Count(s[:q], "\n")
			}
		}
		k = p
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lexTag reads the inside of one tag up to its closing }} or %}; it returns the tokens, the bytes
// consumed (closing delimiter included) and the newlines crossed.
func (g *tplGuard) lexTag(s string, stmt bool, line int) ([]token, int, int) {
	closer := "}}"
	if stmt {
		closer = "%}"
	}
	var toks []token
	nl := 0
	i := 0
	for {
		g.step()
		for i < len(s) && isSpace(s[i]) {
			if s[i] == '\n' {
				nl++
			}
			i++
		}
		if i >= len(s) {
			g.syntax("has a tag opened at line %d and never closed with %s", line, closer)
		}
		if strings.HasPrefix(s[i:], closer) {
			return append(toks, token{kind: tkEnd, line: line + nl}), i + 2, nl
		}
		if (s[i] == '-' || s[i] == '+') && strings.HasPrefix(s[i+1:], closer) {
			return append(toks, token{kind: tkEnd, line: line + nl}), i + 3, nl
		}
		c := s[i]
		switch {
		case isNameStart(c):
			j := i + 1
			for j < len(s) && (isNameStart(s[j]) || isDigit(s[j])) {
				j++
			}
			toks = append(toks, token{kind: tkName, text: s[i:j], line: line + nl})
			i = j
		case isDigit(c):
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			isFloat := false
			if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) && !strings.ContainsAny(s[i:j], "xXoObB") {
				isFloat = true
				j += 2
				for j < len(s) && (isDigit(s[j]) || s[j] == '_') {
					j++
				}
				if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
					j++
					if j < len(s) && (s[j] == '+' || s[j] == '-') {
						j++
					}
					for j < len(s) && isDigit(s[j]) {
						j++
					}
				}
			}
			lit := s[i:j]
			t := token{line: line + nl, text: lit}
			if !isFloat && (strings.ContainsAny(lit, "eE") && !strings.ContainsAny(lit, "xX")) {
				isFloat = true
			}
			if isFloat {
				f, err := strconv.ParseFloat(strings.ReplaceAll(lit, "_", ""), 64)
				if err != nil && !strings.Contains(err.Error(), "range") {
					g.syntax("has a number it cannot read at line %d: %q", line+nl, lit)
				}
				t.kind, t.fval = tkFloat, f
			} else {
				v, err := strconv.ParseInt(lit, 0, 64)
				if err != nil {
					if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
						t.big = true
					} else if lit != "0" && strings.Trim(strings.ReplaceAll(lit, "_", ""), "0") == "" {
						v = 0
					} else {
						g.syntax("has a number it cannot read at line %d: %q", line+nl, lit)
					}
				}
				t.kind, t.ival = tkInt, v
			}
			toks = append(toks, t)
			i = j
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				if s[j] == '\n' {
					nl++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				g.syntax("has a string opened at line %d and never closed", line+nl)
			}
			toks = append(toks, token{kind: tkString, text: b.String(), line: line + nl})
			i = j + 1
		default:
			op := s[i : i+1]
			if i+1 < len(s) {
				switch two := s[i : i+2]; two {
				case "**", "//", "==", "!=", "<=", ">=":
					op = two
				}
			}
			if !strings.Contains("+-*/%~|.,:()[]{}<>=!", op[:1]) || op == "!" {
				g.syntax("has a character Jinja does not accept at line %d: %q", line+nl, op)
			}
			toks = append(toks, token{kind: tkOp, text: op, line: line + nl})
			i += len(op)
		}
	}
}
