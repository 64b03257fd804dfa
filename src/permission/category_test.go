package permission

import (
	"strings"
	"testing"
)

// HubAdmin stands, in this package's tests, for a category an integration registers (Hubitat's
// hub_admin is registered by its toolset the same way): the tests check that a registered category
// is asked for, granted, persisted and listed like hamcp's own.
const HubAdmin Category = "hub_admin"

func init() {
	RegisterCategory(CategoryInfo{Category: HubAdmin, Warning: "Hub administration lets the assistant change the hub itself (a test's wording)."})
}

func TestRegisteredCategory(t *testing.T) {
	if c, err := ParseCategory(" HUB_admin "); err != nil || c != HubAdmin {
		t.Fatalf("ParseCategory of a registered category: %q, %v", c, err)
	}
	if _, err := ParseCategory("doors"); err == nil || !strings.Contains(err.Error(), "filesystem") || !strings.Contains(err.Error(), "hub_admin") {
		t.Fatalf("unknown category: %v, want the known ones listed, registered ones included", err)
	}
	if AllCategories[len(AllCategories)-1] != HubAdmin {
		t.Fatalf("AllCategories %v: a registered category comes after hamcp's own", AllCategories)
	}
	m, err := New(Options{Categories: []Category{HubAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if w := m.warnings[HubAdmin]; !strings.Contains(w, "a test's wording") {
		t.Fatalf("the manager's warning for a registered category: %q", w)
	}
	for _, bad := range []CategoryInfo{
		{Category: HubAdmin, Warning: "again"},
		{Category: "Hub Admin", Warning: "odd name"},
		{Category: "", Warning: "no name"},
		{Category: "other_admin", Warning: " "},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterCategory(%+v) did not panic", bad)
				}
			}()
			RegisterCategory(bad)
		}()
	}
}
