package panel

import "testing"

// TestPagesParse: the templates are parsed on first use, so a broken one must fail here rather
// than on a user's first visit.
func TestPagesParse(t *testing.T) {
	t.Parallel()
	got := pages()
	for _, name := range pageNames {
		if got[name] == nil || got[name].Lookup("layout") == nil || got[name].Lookup(name) == nil {
			t.Errorf("page %q: template set incomplete", name)
		}
	}
}
