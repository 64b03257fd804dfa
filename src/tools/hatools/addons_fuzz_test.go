package hatools

import (
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/homeassistant"
)

func FuzzAddonSlug(f *testing.F) {
	for _, s := range []string{"core_mosquitto", "a0d7b954_vscode", "self", "../core/restart", "a/b", "", ".", "x?y=1", "%2e%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, slug string) {
		if !slugRe.MatchString(slug) {
			return
		}
		// An accepted slug stays one path segment and cannot climb out of /addons/.
		if strings.ContainsAny(slug, "/\\?#% ") || strings.HasPrefix(slug, ".") {
			t.Fatalf("slug %q accepted", slug)
		}
	})
}

func FuzzFindRepo(f *testing.F) {
	repos := []homeassistant.HACSRepository{{ID: "1", FullName: "hacs/integration"}, {ID: "22", FullName: "piitaya/lovelace-mushroom"}}
	for _, s := range []string{"1", "hacs/integration", "https://github.com/Piitaya/Lovelace-Mushroom/", "", "2", "x/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		r, err := findRepo(repos, ref)
		if err != nil {
			return
		}
		if !strings.Contains(strings.ToLower(ref), strings.ToLower(r.FullName)) && !strings.Contains(ref, r.ID) {
			t.Fatalf("%q resolved to %+v", ref, r)
		}
	})
}
