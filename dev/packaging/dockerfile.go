package packaging

import (
	"fmt"
	"os"
	"strings"
	"unicode"
)

// Instruction is one Dockerfile instruction with its continuation lines joined.
type Instruction struct {
	Line int    // where it starts, 1-based
	Cmd  string // upper-case: FROM, RUN, LABEL, ...
	Args string // the rest of the instruction
}

// Stage is one FROM and the instructions up to the next.
type Stage struct {
	From, Name, Platform string
	Body                 []Instruction
}

// Dockerfile is a parsed Dockerfile: the ARGs before the first FROM, and the stages.
type Dockerfile struct {
	GlobalArgs map[string]string // name → default ("" when none)
	Stages     []Stage
}

// ParseDockerfile reads the subset of the Dockerfile syntax the add-on uses: comments,
// backslash continuations, and instructions.
func ParseDockerfile(path string) (*Dockerfile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseDockerfile(string(raw))
}

func parseDockerfile(text string) (*Dockerfile, error) {
	d := &Dockerfile{GlobalArgs: map[string]string{}}
	var cur strings.Builder
	start := 0
	flush := func() error {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return nil
		}
		cmd, args, _ := strings.Cut(text, " ")
		in := Instruction{Line: start, Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)}
		switch {
		case in.Cmd == "FROM":
			st := Stage{}
			f := strings.Fields(in.Args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				if p, ok := strings.CutPrefix(f[0], "--platform="); ok {
					st.Platform = p
				}
				f = f[1:]
			}
			if len(f) == 0 {
				return fmt.Errorf("line %d: FROM without an image", in.Line)
			}
			st.From = f[0]
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.Name = f[2]
			}
			d.Stages = append(d.Stages, st)
		case len(d.Stages) == 0:
			if in.Cmd != "ARG" {
				return fmt.Errorf("line %d: only ARG may come before the first FROM, not %s", in.Line, in.Cmd)
			}
			name, def, _ := strings.Cut(in.Args, "=")
			d.GlobalArgs[name] = def
		default:
			last := &d.Stages[len(d.Stages)-1]
			last.Body = append(last.Body, in)
		}
		return nil
	}
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if body, ok := strings.CutSuffix(strings.TrimRightFunc(line, unicode.IsSpace), `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return d, nil
}

// Find returns the stage's instructions of one kind.
func (s Stage) Find(cmd string) []Instruction {
	var out []Instruction
	for _, in := range s.Body {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// Labels parses the stage's LABEL instructions (key="value" pairs, quotes optional).
func (s Stage) Labels() (map[string]string, error) {
	out := map[string]string{}
	for _, in := range s.Find("LABEL") {
		words, err := shellWords(in.Args)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", in.Line, err)
		}
		for _, w := range words {
			k, v, ok := strings.Cut(w, "=")
			if !ok {
				return nil, fmt.Errorf("line %d: label %q has no value", in.Line, w)
			}
			out[k] = v
		}
	}
	return out, nil
}

// shellWords splits on blanks outside double quotes and removes the quotes.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case unicode.IsSpace(r) && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
