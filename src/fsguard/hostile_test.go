package fsguard

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// hostileCase is one attacking path. lexical: Resolve itself must refuse it. outward: it resolves, but
// leads outside its root (or to content that may be outside), so reading it must fail.
type hostileCase struct {
	path    string
	lexical bool
	outward bool
}

// traversals are path tails that are wrong on their face: traversal, encodings, unicode lookalikes,
// invisible and direction characters, decomposed forms, NUL and control bytes, trailing dots and spaces.
var traversals = []string{
	"../outside/canary.txt", "../../outside/canary.txt", "../../../../../../../../etc/passwd",
	"sub/../../../outside/canary.txt", "..", "../", "sub/..", "sub/../", "./../outside/canary.txt",
	"sub/./a.yaml", "sub//a.yaml", "/sub/a.yaml", "sub/a.yaml/..", "sub/a.yaml/.", ".", "./",
	"%2e%2e/outside/canary.txt", "%2E%2E%2Foutside%2Fcanary.txt", "..%2f..%2foutside", "%2e%2e%5c..",
	"%252e%252e/outside", "%u002e%u002e/outside", "sub%2fa.yaml", "%00", "\xc0\xae\xc0\xae/outside",
	"\xe0\x80\xae\xe0\x80\xae/outside", "\xff\xfe", "\uff0e\uff0e/outside/canary.txt",
	"\u2024\u2024/outside", "..\uff0foutside", "\uff0e\uff0e\uff0f\uff0e\uff0e\uff0foutside",
	"..\u2215outside", "..\u2044outside", "\u2025/outside", "\ufe52\ufe52/outside", "\u3002\u3002/outside",
	"\u202e../outside", "sub\u202ela.yaml", "..\u200b/outside", "\u200d..", "\ufeffconfiguration.yaml",
	"caf\u0065\u0301.yaml", "\u0301", ".\u0307./outside", "\u00a0../outside",
	"..\\..\\outside\\canary.txt", "sub\\..\\..\\outside", "sub\\a.yaml",
	"sub/a.yaml\x00.png", "\x00", "a\tb", "a\nb", "a\rb", "\x7f", "\x1b[31m",
	"sub.", "sub./a.yaml", "sub /a.yaml", " sub/a.yaml", "configuration.yaml.", "configuration.yaml ",
	"...", "sub/...", ". /outside", ".. /outside", "sub/.. /x", "sub/a.yaml/ ",
}

// outwardNames exist under /config as links (or a hard link, or a FIFO) that must not be followed out.
var outwardNames = []string{
	"link_rel_out", "link_abs_out", "link_dir_out/canary.txt", "link_dir_abs/canary.txt",
	"link_dir_out/dir/canary2.txt", "link_parent/outside/canary.txt", "link_root_abs/etc/passwd",
	"link_root_abs" + "/" + "tmp", "chain1", "chain2", "loop1", "loop2/x", "self", "self/x",
	"sub/link_up_out", "hard_canary", "link_to_ssl/cert.pem", "fifo", "link_in/link_up_out",
}

// aliasTricks misuse the root names, or name host paths directly.
func aliasTricks(tr *testTree) []string {
	return []string{
		"/CONFIG/configuration.yaml", "/Config/configuration.yaml", "/configx/configuration.yaml",
		"/config../configuration.yaml", "/config./configuration.yaml", "/config /configuration.yaml",
		"//config/configuration.yaml", "/./config/configuration.yaml", "/../config/configuration.yaml",
		"/config/../ssl/cert.pem", "/config/../../outside/canary.txt", "/homeassistant/../config/x",
		"/ssl/../config/configuration.yaml", "/HOMEASSISTANT/configuration.yaml", "/", "//", "///", "",
		"/etc/passwd", "/media/x", "/outside/canary.txt", "/roots/config/configuration.yaml",
		tr.outside + "/canary.txt", tr.config + "/configuration.yaml", "/\uff43\uff4f\uff4e\uff46\uff49\uff47/x",
		"/config\u200b/configuration.yaml", "/%63onfig/configuration.yaml", "/config%2f..%2fssl/cert.pem",
		"/config\\..\\ssl\\cert.pem", "~/../outside/canary.txt", "/proc/self/root/etc/passwd",
		"/sys/kernel", "/config\x00/x", "\\config\\configuration.yaml", "/co\u0301nfig/x", "/data/options.json",
	}
}

func hostileCorpus(tr *testTree) []hostileCase {
	var corpus []hostileCase
	for _, prefix := range []string{"/config/", "/homeassistant/", "/share/", "/ssl/", ""} {
		for _, tail := range traversals {
			corpus = append(corpus, hostileCase{path: prefix + tail, lexical: true})
		}
	}
	for _, p := range aliasTricks(tr) {
		corpus = append(corpus, hostileCase{path: p, lexical: true})
	}
	for _, prefix := range []string{"/config/", "/homeassistant/", ""} {
		for _, name := range outwardNames {
			corpus = append(corpus, hostileCase{path: prefix + name, outward: true})
		}
	}
	for _, name := range []string{"link_out/canary2.txt", "hard_canary2", "link_out"} {
		corpus = append(corpus, hostileCase{path: "/share/" + name, outward: name != "link_out"})
	}
	return corpus
}

// TestHostilePaths runs every operation on every hostile path and counts escapes: any change to the
// guarded files (outside the roots, and the read-only root), and any outside content returned or copied
// into the trash. Paths refused on their face share one tree (nothing may change it, and that is checked
// after every operation); the others, whose operations may legitimately change the tree (deleting a
// symlink, say), each get a fresh one.
func TestHostilePaths(t *testing.T) {
	shared := newTree(t)
	corpus := hostileCorpus(shared)
	if len(corpus) < 200 {
		t.Fatalf("corpus has %d paths, want at least 200", len(corpus))
	}
	sharedOps := hostileOps(t, shared)
	var escapes, runs atomic.Int64
	t.Run("cases", func(t *testing.T) {
		for i, tc := range corpus {
			if tc.lexical {
				runHostile(t, shared, sharedOps, tc, &escapes, &runs)
				continue
			}
			t.Run(fmt.Sprintf("fresh%03d", i), func(t *testing.T) {
				t.Parallel() // each has its own tree; running them together overlaps their fsyncs
				tr := newTree(t)
				runHostile(t, tr, hostileOps(t, tr), tc, &escapes, &runs)
			})
		}
	})
	t.Logf("%d hostile paths, %d operations: %d escapes", len(corpus), runs.Load(), escapes.Load())
}

func runHostile(t *testing.T, tr *testTree, ops []hostileOp, tc hostileCase, escapes, runs *atomic.Int64) {
	for _, op := range ops {
		runs.Add(1)
		data, err := op.run(tc.path)
		msg := ""
		if strings.Contains(data, canaryMarker) {
			msg = "returned outside content"
		}
		if e := tr.escaped(t); e != "" {
			msg += " " + e
		}
		if msg != "" {
			escapes.Add(1)
			t.Errorf("ESCAPE %s(%q): %s (err=%v)", op.name, tc.path, msg, err)
		}
		if tc.lexical && op.usesPath && (!errors.Is(err, ErrOutsideRoots) || !strings.Contains(fmtErr(err), "allowed roots: /config")) {
			t.Errorf("%s(%q) = %v; want ErrOutsideRoots naming the allowed roots", op.name, tc.path, err)
		}
		if op.name == "ReadFile" && tc.outward && err == nil {
			t.Errorf("ReadFile(%q) succeeded; want refusal", tc.path)
		}
	}
}

type hostileOp struct {
	name     string
	usesPath bool // the operation acts on the hostile path
	run      func(p string) (string, error)
}

func hostileOps(t *testing.T, tr *testTree) []hostileOp {
	f := tr.fs
	// A trash item to restore onto the hostile path.
	w, err := f.WriteFile("/config/configuration.yaml", []byte("v2\n"), 0, WriteOptions{})
	must(t, err)
	return []hostileOp{
		{"Resolve", true, func(p string) (string, error) { _, err := f.Resolve(p); return "", err }},
		{"Stat", true, func(p string) (string, error) { _, err := f.Stat(p); return "", err }},
		{"ReadFile", true, func(p string) (string, error) { b, _, err := f.ReadFile(p, 0, 0); return string(b), err }},
		{"ReadLines", true, func(p string) (string, error) { s, _, _, err := f.ReadLines(p, 1, 100); return s, err }},
		{"List", true, func(p string) (string, error) {
			_, _, err := f.List(p, ListOptions{Hidden: true})
			return "", err
		}},
		{"Trash", true, func(p string) (string, error) {
			if p == "" {
				return "", &PathError{Err: ErrOutsideRoots, Reason: "(empty lists the whole trash)", Roots: f.aliases}
			}
			_, err := f.Trash(p)
			return "", err
		}},
		{"WriteFile", true, func(p string) (string, error) {
			_, err := f.WriteFile(p, []byte("pwned\n"), 0o644, WriteOptions{CreateDirs: true})
			return "", err
		}},
		{"MoveFrom", true, func(p string) (string, error) { return "", f.Move(p, "/config/moved", true) }},
		{"MoveTo", true, func(p string) (string, error) { return "", f.Move("/config/sub/deep/b.yaml", p, true) }},
		{"Restore", true, func(p string) (string, error) {
			if p == "" {
				return "", &PathError{Err: ErrOutsideRoots, Reason: "(empty restores to the original path)", Roots: f.aliases}
			}
			_, err := f.Restore(w.PreviousVersionID, p, true)
			return "", err
		}},
		{"Delete", true, func(p string) (string, error) { _, err := f.Delete(p, true); return "", err }},
		{"ReadMoved", false, func(string) (string, error) {
			b, _, err := f.ReadFile("/config/moved", 0, 0)
			return string(b), err
		}},
	}
}
