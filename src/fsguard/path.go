package fsguard

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	maxPathLen  = 4096 // PATH_MAX on Linux
	maxNameLen  = 255  // NAME_MAX on Linux
	defaultRoot = "/config"
)

// splitPath checks a user path lexically and splits it into a root alias and a slash-separated path
// relative to that root ("." for the root itself). It never looks at the disk. The reason it returns is
// written for the user: what is wrong and what to write instead.
func splitPath(p string) (alias, rel, reason string) {
	if p == "" {
		return "", "", "is empty; give a path such as /config/configuration.yaml"
	}
	if len(p) > maxPathLen {
		return "", "", fmt.Sprintf("is longer than %d bytes", maxPathLen)
	}
	if reason := checkChars(p); reason != "" {
		return "", "", reason
	}
	rest := p
	alias = defaultRoot
	if strings.HasPrefix(p, "/") {
		alias, rest, _ = strings.Cut(p[1:], "/")
		if alias == "" {
			return "", "", "does not name a root; start with a root such as /config/"
		}
		alias = "/" + alias
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		return alias, ".", ""
	}
	for name := range strings.SplitSeq(rest, "/") {
		if reason := checkName(name); reason != "" {
			return "", "", reason
		}
	}
	return alias, rest, ""
}

// checkName refuses path components that mean something other than a plain name, or that look like
// another name.
func checkName(name string) string {
	switch {
	case name == "":
		return "contains an empty name (//); separate names with a single /"
	case name == ".":
		return "contains a '.' component; write the path without /./"
	case name == "..":
		return "contains '..'; write the full path from a root instead"
	case len(name) > maxNameLen:
		return fmt.Sprintf("has a name longer than %d bytes", maxNameLen)
	case strings.HasSuffix(name, ".") || strings.HasSuffix(name, " "):
		return fmt.Sprintf("has a name ending in a dot or space (%q); remove it", name)
	case strings.HasPrefix(name, " "):
		return fmt.Sprintf("has a name starting with a space (%q); remove it", name)
	}
	return ""
}

// checkChars refuses characters that can smuggle in a separator, a dot, or a second spelling of a name.
func checkChars(p string) string {
	if !utf8.ValidString(p) {
		return "is not valid UTF-8"
	}
	for i, r := range p {
		switch {
		case r == 0:
			return "contains a NUL byte"
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("contains the control character U+%04X", r)
		case r == '\\':
			return "contains a backslash; separate names with /"
		case r == '%' && isPercentEncoded(p[i:]):
			return "contains percent-encoding; paths are used literally, so write the character itself"
		case r >= utf8.RuneSelf && !unicode.IsLetter(r) && !unicode.Is(unicode.Nd, r):
			return fmt.Sprintf("contains the character U+%04X; names may use ASCII, letters and digits, "+
				"not lookalike punctuation, invisible, direction or combining characters", r)
		}
	}
	return ""
}

// isPercentEncoded reports whether s starts with "%XX" or "%uXXXX" (hex digits).
func isPercentEncoded(s string) bool {
	if len(s) >= 3 && isHex(s[1]) && isHex(s[2]) {
		return true
	}
	if len(s) >= 6 && (s[1] == 'u' || s[1] == 'U') {
		return isHex(s[2]) && isHex(s[3]) && isHex(s[4]) && isHex(s[5])
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// parentRel returns the parent of a root-relative path ("." for a top-level name) and its last name.
func parentRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ".", rel
	}
	return rel[:i], rel[i+1:]
}

// joinRel joins root-relative paths, treating "." as empty.
func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}
