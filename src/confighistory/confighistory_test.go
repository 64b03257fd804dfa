package confighistory_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/store"
)

func open(t *testing.T) (*confighistory.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := confighistory.Open(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return h, path
}

func TestKeepNumbersListsAndReadsBack(t *testing.T) {
	ctx := context.Background()
	h, _ := open(t)
	keep := []confighistory.Version{
		{Item: "script:morning", Change: confighistory.Updated, Config: json.RawMessage(`{"alias":"Morning v1"}`), Title: "Morning", Tool: "ha_manage_scripts"},
		{Item: "script:morning", Change: confighistory.Updated, Config: json.RawMessage(`{"alias":"Morning v2"}`)},
		{Item: "scene:movie", Change: confighistory.Created},
		{Item: "script:evening", Change: confighistory.Deleted, Config: json.RawMessage(`{"alias":"Evening"}`)},
	}
	wantN := []int{1, 2, 1, 1}
	for i, v := range keep {
		got, err := h.Keep(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if got.N != wantN[i] {
			t.Errorf("%s: version %d, want %d", v.Item, got.N, wantN[i])
		}
	}
	for _, tt := range []struct {
		name  string
		q     confighistory.Query
		items []string
	}{
		{"one item", confighistory.Query{Item: "script:morning"}, []string{"script:morning", "script:morning"}},
		{"a kind", confighistory.Query{Kind: "script"}, []string{"script:evening", "script:morning", "script:morning"}},
		{"everything", confighistory.Query{}, []string{"script:evening", "scene:movie", "script:morning", "script:morning"}},
		{"paged", confighistory.Query{Limit: 1, Offset: 1}, []string{"scene:movie"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := h.List(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var items []string
			for _, v := range got {
				items = append(items, v.Item)
				if v.Config != nil {
					t.Errorf("List carries configs; Get reads them")
				}
			}
			if strings.Join(items, ",") != strings.Join(tt.items, ",") {
				t.Errorf("items %v, want %v", items, tt.items)
			}
			if tt.q.Limit == 0 && total != len(tt.items) {
				t.Errorf("total %d, want %d", total, len(tt.items))
			}
		})
	}
	v, err := h.Get(ctx, "script:morning", 1)
	if err != nil || string(v.Config) != `{"alias":"Morning v1"}` || v.Title != "Morning" || v.Tool != "ha_manage_scripts" {
		t.Fatalf("version 1: %+v, %v", v, err)
	}
	if latest, err := h.Get(ctx, "script:morning", 0); err != nil || latest.N != 2 {
		t.Fatalf("latest: %+v, %v", latest, err)
	}
	if created, err := h.Get(ctx, "scene:movie", 1); err != nil || string(created.Config) != "null" {
		t.Fatalf("a created item keeps null: %+v, %v", created, err)
	}
	if err := h.Forget(ctx, "script:morning", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Get(ctx, "script:morning", 2); !errors.Is(err, confighistory.ErrNotFound) {
		t.Fatalf("a forgotten version is still there: %v", err)
	}
}

func TestKeepRefusesWhatItCannotKeep(t *testing.T) {
	h, _ := open(t)
	for _, tt := range []struct {
		name string
		v    confighistory.Version
		want string
	}{
		{"no kind", confighistory.Version{Item: "morning", Change: confighistory.Updated}, "kind:id"},
		{"no id", confighistory.Version{Item: "script:", Change: confighistory.Updated}, "kind:id"},
		{"not JSON", confighistory.Version{Item: "script:a", Config: json.RawMessage("{"), Change: confighistory.Updated}, "not JSON"},
		{"too large", confighistory.Version{Item: "dashboard:a", Config: json.RawMessage(`"` + strings.Repeat("x", confighistory.MaxConfigBytes) + `"`), Change: confighistory.Updated}, "more than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := h.Keep(context.Background(), tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// An item changed more often than KeepPerItem keeps its latest versions, still numbered on.
func TestKeepDropsTheOldestPastTheLimit(t *testing.T) {
	ctx := context.Background()
	h, _ := open(t)
	for i := 0; i < confighistory.KeepPerItem+5; i++ {
		if _, err := h.Keep(ctx, confighistory.Version{Item: "helper:input_boolean.guest", Change: confighistory.Updated, Config: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	got, total, err := h.List(ctx, confighistory.Query{Item: "helper:input_boolean.guest", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if total != confighistory.KeepPerItem || got[0].N != confighistory.KeepPerItem+5 || got[len(got)-1].N != 6 {
		t.Fatalf("kept %d versions, newest %d, oldest %d", total, got[0].N, got[len(got)-1].N)
	}
}

// Versions survive a restart: they are in the store's file.
func TestVersionsOutliveTheProcess(t *testing.T) {
	ctx := context.Background()
	h, path := open(t)
	if _, err := h.Keep(ctx, confighistory.Version{Item: "automation:1", Change: confighistory.Deleted, Config: json.RawMessage(`{"alias":"Door"}`)}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	again, err := confighistory.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := again.Get(ctx, "automation:1", 1); err != nil || string(v.Config) != `{"alias":"Door"}` {
		t.Fatalf("after reopening: %+v, %v", v, err)
	}
}

// BenchmarkKeep is the cost every configuration write pays for its undo: one small SQLite transaction
// (a 4 KB automation, the history's trim included).
func BenchmarkKeep(b *testing.B) {
	path := filepath.Join(b.TempDir(), "hamcp.db")
	st, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	h, err := confighistory.Open(context.Background(), st)
	if err != nil {
		b.Fatal(err)
	}
	cfg := json.RawMessage(`{"alias":"` + strings.Repeat("x", 4000) + `"}`)
	for i := 0; b.Loop(); i++ {
		if _, err := h.Keep(context.Background(), confighistory.Version{Item: "automation:" + strconv.Itoa(i%20), Change: confighistory.Updated, Config: cfg}); err != nil {
			b.Fatal(err)
		}
	}
}
