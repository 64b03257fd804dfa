package panel

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// secretShapes are what a secret looks like in text the audit log recorded: the approval link's
// secret (also in refusals the model was given), JSON Web Tokens (Home Assistant's tokens), and
// hamcp's own OAuth tokens and client secrets. The panel shows none of them, whoever wrote them.
// Compiled when the panel first shows the audit log, not at start: an idle add-on should not
// hold them.
var secretShapes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`([?&]r=)[A-Za-z0-9_%-]{16,}`),
		regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),
		regexp.MustCompile(`hamcp_(at|rt|cs)_[A-Za-z0-9_-]{8,}`),
		regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{16,}`),
	}
})

// redact hides every secret-shaped part of s.
func redact(s string) string {
	for i, re := range secretShapes() {
		switch i {
		case 0, 3:
			s = re.ReplaceAllString(s, "${1}[hidden]")
		default:
			s = re.ReplaceAllString(s, "[hidden]")
		}
	}
	return s
}

// short cuts s to about n bytes on a word boundary, marking the cut.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > n/2 {
		cut = i
	}
	return s[:cut] + " …"
}
