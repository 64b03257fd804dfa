package hatools

import (
	"strings"
	"testing"
)

// FuzzBackupArgs: whatever the model sends, check never panics, and a slug or job id it lets
// through is one path segment of the Supervisor's API.
func FuzzBackupArgs(f *testing.F) {
	for _, s := range [][3]string{{"restore", "9ecf2b1a", ""}, {"delete", "../core/restart", ""}, {"status", "", "abc/../x"},
		{"restore", "a b", ""}, {"status", "", "5d9e8c7b6a5f4e3d2c1b0a9f8e7d6c5b"}, {"delete", "%2e%2e", ""}, {"restore", "", ""}} {
		f.Add(s[0], s[1], s[2], "core_mosquitto")
	}
	f.Fuzz(func(t *testing.T, action, slug, job, addon string) {
		if action == "status" {
			slug = job
		}
		a := manageBackupsArgs{Action: action, Slug: slug, Partial: &backupParts{Addons: []string{addon}}}
		if action != "create" && action != "restore" {
			a.Partial = nil
		}
		if a.check() != nil {
			return
		}
		if (action == "restore" || action == "delete" || action == "status") && strings.ContainsAny(a.Slug, "/?#%\\. ") {
			t.Fatalf("%s let %q through", action, a.Slug)
		}
		if a.Partial != nil && strings.ContainsAny(addon, "/?#%\\ ") {
			t.Fatalf("addon %q let through", addon)
		}
		q := backupAsk(a)
		if (action == "restore" || action == "delete") && len(q.Classes) == 0 {
			t.Fatalf("%s %q needs no confirmation", action, slug)
		}
	})
}
