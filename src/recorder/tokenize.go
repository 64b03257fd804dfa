package recorder

import (
	"errors"
	"fmt"
	"strings"
)

// tokenKind is the lexical class of a token, following SQLite's tokenizer
// (tokenize.c) closely enough that keyword and statement boundaries agree
// with what SQLite itself will see.
type tokenKind int

const (
	tokWord      tokenKind = iota // bare identifier or keyword
	tokQuotedID                   // "x", `x` or [x]
	tokString                     // 'x'
	tokBlob                       // x'00ff'
	tokNumber                     // 12, 1.5e3, 0xff
	tokVariable                   // ?, ?1, :name, @name, $name
	tokSemicolon                  // ;
	tokLParen                     // (
	tokRParen                     // )
	tokPunct                      // any other operator or character
)

type token struct {
	kind tokenKind
	text string // raw text as written (quotes included)
	pos  int    // byte offset in the input
}

// value is the token's content with quoting removed: the identifier a quoted
// name denotes, or a string literal's characters.
func (t token) value() string {
	switch t.kind {
	case tokQuotedID:
		body := t.text[1 : len(t.text)-1]
		switch t.text[0] {
		case '"':
			return strings.ReplaceAll(body, `""`, `"`)
		case '`':
			return strings.ReplaceAll(body, "``", "`")
		}
		return body // [x] has no escape
	case tokString:
		return strings.ReplaceAll(t.text[1:len(t.text)-1], "''", "'")
	}
	return t.text
}

// is reports whether t is the bare keyword kw (ASCII case-insensitive, like
// SQLite's keyword lookup; a quoted name is never a keyword).
func (t token) is(kw string) bool {
	return t.kind == tokWord && strings.EqualFold(t.text, kw)
}

// upper is the ASCII upper-case text of a bare word, "" for anything else.
func (t token) upper() string {
	if t.kind != tokWord {
		return ""
	}
	return asciiUpper(t.text)
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// isSpace matches SQLite's CC_SPACE class exactly: other control characters
// are illegal tokens to SQLite, never separators.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// isIDStart / isIDChar follow SQLite: letters, '_', any byte >= 0x80, and
// (after the first byte) digits and '$'.
func isIDStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c >= 0x80
}

func isIDChar(c byte) bool { return isIDStart(c) || ('0' <= c && c <= '9') || c == '$' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

var errNUL = errors.New("sql contains a NUL byte: SQLite would ignore everything after it; remove it")

// tokenize splits sql into tokens, dropping whitespace and comments. It fails
// on what SQLite would also reject or misread: NUL bytes and unterminated
// strings or quoted names. An unterminated /* comment runs to the end of the
// input, as in SQLite.
func tokenize(sql string) ([]token, error) {
	var out []token
	i := 0
	for i < len(sql) {
		c := sql[i]
		start := i
		switch {
		case c == 0:
			return nil, errNUL
		case isSpace(c):
			i++
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				if sql[i] == 0 {
					return nil, errNUL
				}
				i++
			}
			continue
		case c == '/' && i+2 < len(sql) && sql[i+1] == '*':
			// As SQLite's tokenizer: "/*" opens a comment (to its "*/" or the end) only when
			// something follows; a bare "/*" at the very end is the operators / and *.
			end := strings.Index(sql[i+2:], "*/")
			body := sql[i+2:]
			if end >= 0 {
				body = body[:end]
				i += 2 + end + 2
			} else {
				i = len(sql)
			}
			if strings.IndexByte(body, 0) >= 0 {
				return nil, errNUL
			}
			continue
		case c == '\'':
			n, err := quoted(sql[i:], '\'', "string literal")
			if err != nil {
				return nil, fmt.Errorf("%w (at byte %d)", err, i)
			}
			out = append(out, token{tokString, sql[i : i+n], start})
			i += n
			continue
		case c == '"' || c == '`':
			n, err := quoted(sql[i:], c, "quoted name")
			if err != nil {
				return nil, fmt.Errorf("%w (at byte %d)", err, i)
			}
			out = append(out, token{tokQuotedID, sql[i : i+n], start})
			i += n
			continue
		case c == '[':
			end := strings.IndexByte(sql[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unterminated [quoted name] starting at byte %d: close it with ]", i)
			}
			if strings.IndexByte(sql[i:i+end], 0) >= 0 {
				return nil, errNUL
			}
			out = append(out, token{tokQuotedID, sql[i : i+end+1], start})
			i += end + 1
			continue
		case (c == 'x' || c == 'X') && i+1 < len(sql) && sql[i+1] == '\'':
			// SQLite ends a blob literal at the next quote: no '' escape.
			end := strings.IndexByte(sql[i+2:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated blob literal at byte %d: close it with '", i)
			}
			if strings.IndexByte(sql[i+2:i+2+end], 0) >= 0 {
				return nil, errNUL
			}
			i += 2 + end + 1
			out = append(out, token{tokBlob, sql[start:i], start})
			continue
		case isIDStart(c):
			for i < len(sql) && isIDChar(sql[i]) {
				i++
			}
			out = append(out, token{tokWord, sql[start:i], start})
			continue
		case isDigit(c) || (c == '.' && i+1 < len(sql) && isDigit(sql[i+1])):
			// Numbers, including hex, exponents and digit separators; a
			// following identifier character is swallowed as SQLite
			// would reject it anyway.
			for i < len(sql) && (isIDChar(sql[i]) || sql[i] == '.' ||
				((sql[i] == '+' || sql[i] == '-') && (sql[i-1] == 'e' || sql[i-1] == 'E') && !strings.HasPrefix(asciiLower(sql[start:i]), "0x"))) {
				i++
			}
			out = append(out, token{tokNumber, sql[start:i], start})
			continue
		case c == '?':
			i++
			for i < len(sql) && isDigit(sql[i]) {
				i++
			}
			out = append(out, token{tokVariable, sql[start:i], start})
			continue
		case c == ':' || c == '@' || c == '$' || c == '#':
			n, err := namedVariable(sql[i:])
			if err != nil {
				return nil, err
			}
			out = append(out, token{tokVariable, sql[i : i+n], start})
			i += n
			continue
		case c == ';':
			out = append(out, token{tokSemicolon, ";", start})
		case c == '(':
			out = append(out, token{tokLParen, "(", start})
		case c == ')':
			out = append(out, token{tokRParen, ")", start})
		default:
			out = append(out, token{tokPunct, sql[i : i+1], start})
		}
		i++
	}
	return out, nil
}

// quoted returns the length of the quoted token at the start of s (which
// begins with q), where a doubled q stands for one q.
func quoted(s string, q byte, what string) (int, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case 0:
			return 0, errNUL
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated %s: close it with %c", what, q)
}

// namedVariable measures a :name, @name, $name or #name parameter exactly as
// SQLite's tokenizer does, including its TCL forms $a::b and $a(any text up
// to a space or ')'), which can swallow quotes and semicolons: reading those
// any other way would put statement boundaries where SQLite does not.
func namedVariable(s string) (int, error) {
	i, n := 1, 0
	for i < len(s) {
		c := s[i]
		switch {
		case isIDChar(c):
			n++
			i++
			continue
		case c == '(' && n > 0:
			i++
			for i < len(s) && s[i] != ')' && !isCSpace(s[i]) {
				if s[i] == 0 {
					return 0, errNUL
				}
				i++
			}
			if i < len(s) && s[i] == ')' {
				i++
			}
			return i, nil
		case c == ':' && i+1 < len(s) && s[i+1] == ':':
			i += 2
			continue
		}
		break
	}
	return i, nil // n == 0: SQLite rejects it as an illegal token
}

// isCSpace is C's isspace, which SQLite uses inside $name(...): unlike the
// tokenizer's separators it includes \v.
func isCSpace(c byte) bool { return isSpace(c) || c == '\v' }
