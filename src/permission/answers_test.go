package permission

import (
	"strings"
	"testing"
)

// A friendly name is shown beside the id it belongs to; a name an assistant set cannot reorder or
// hide that id with bidirectional or control characters, nor push it off the card.
func TestNameEntities(t *testing.T) {
	names := map[string]string{
		"lock.front_door":   "Front Door",
		"lock.back_door":    "Hallway lamp \u202e)pmal.thgil(",
		"light.hall":        "Hall\x00\n light",
		"light.long":        strings.Repeat("x", 200),
		"switch.same":       "switch.same",
		"cover.garage_door": "",
	}
	for _, tt := range []struct{ in, want string }{
		{"entity_id: lock.front_door", "entity_id: Front Door (lock.front_door)"},
		{"entity_id: lock.back_door", "entity_id: Hallway lamp )pmal.thgil( (lock.back_door)"},
		{"entity_id: light.hall", "entity_id: Hall light (light.hall)"},
		{"entity_id: switch.same, cover.garage_door", "entity_id: switch.same, cover.garage_door"},
		{"path: a.yaml", "path: a.yaml"},
		{"", ""},
	} {
		if got := NameEntities(tt.in, func(id string) string { return names[id] }); got != tt.want {
			t.Errorf("NameEntities(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := NameEntities("light.long", func(id string) string { return names[id] })
	if !strings.HasSuffix(long, "… (light.long)") || len([]rune(long)) > maxName+len(" (light.long)") {
		t.Errorf("a long name is not clipped before its id: %q", long)
	}
}
