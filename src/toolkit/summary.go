package toolkit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/redact"
)

// The summary of a call's arguments is what the user reads on the approval page, in the panel and in
// the audit log: "entity_id: lock.front_door, code: [hidden]". It must be readable, short, and never
// carry a secret — the audit log outlives the call, and the model can read it back.
const (
	summaryMax      = 300 // the whole summary, in runes
	summaryValueMax = 80  // one value
	summaryListMax  = 5   // items of a list shown before "+N more"
)

// bulkKeys hold content, not settings: a file's text or a config's body says nothing at a glance and
// may hold anything, so only its size is shown.
var bulkKeys = map[string]bool{"content": true, "contents": true, "data_base64": true, "body": true, "yaml": true}

// Summarize is the default summary of a call's arguments: "key: value" pairs in name order, secrets
// hidden, long values clipped; "" when there are none. The confirm argument is not part of it.
func Summarize(args map[string]any) string {
	names := make([]string, 0, len(args))
	for k := range args {
		if k != confirmArg {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	safe := redact.Map(args)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, k+": "+summaryValue(k, safe[k], 0))
	}
	return redact.Text(clip(strings.Join(parts, ", "), summaryMax))
}

func summaryValue(key string, v any, depth int) string {
	if bulkKeys[strings.ToLower(key)] {
		if s, ok := v.(string); ok {
			return fmt.Sprintf("(%d bytes)", len(s))
		}
		b, _ := json.Marshal(v)
		return fmt.Sprintf("(%d bytes)", len(b))
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return clip(oneLine(x), summaryValueMax)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		items := make([]string, 0, min(len(x), summaryListMax))
		for _, it := range x[:min(len(x), summaryListMax)] {
			items = append(items, summaryValue("", it, depth+1))
		}
		s := strings.Join(items, ", ")
		if len(x) > summaryListMax {
			s += fmt.Sprintf(" +%d more", len(x)-summaryListMax)
		}
		if depth > 0 {
			s = "[" + s + "]"
		}
		return clip(s, summaryValueMax)
	case map[string]any:
		if depth > 0 || len(x) > 4 {
			return fmt.Sprintf("{%d fields}", len(x))
		}
		parts := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k+": "+summaryValue(k, x[k], depth+1))
		}
		return clip("{"+strings.Join(parts, ", ")+"}", summaryValueMax)
	}
	b, _ := json.Marshal(v)
	return clip(string(b), summaryValueMax)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
