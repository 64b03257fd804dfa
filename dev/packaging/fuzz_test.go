package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseDockerfile: any text parses or fails with an error, never a panic, and every stage's
// instructions come from the text.
func FuzzParseDockerfile(f *testing.F) {
	if raw, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile")); err == nil {
		f.Add(string(raw))
	}
	f.Add("ARG A=1\nFROM x AS y\nLABEL a=\"b c\" \\\n d=e\nRUN x\n")
	f.Add("FROM --platform=$P img\nLABEL \"unterminated\n")
	f.Fuzz(func(t *testing.T, text string) {
		d, err := parseDockerfile(text)
		if err != nil {
			return
		}
		for _, st := range d.Stages {
			if !strings.Contains(text, st.From) {
				t.Fatalf("stage FROM %q is not in the text", st.From)
			}
			for _, in := range st.Body {
				if in.Cmd == "" || in.Line < 1 {
					t.Fatalf("instruction %+v", in)
				}
			}
			_, _ = st.Labels()
		}
	})
}
