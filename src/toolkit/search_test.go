package toolkit

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestIntentOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		query                             string
		read, destroy, control, configure bool
	}{
		{"history of temperature", true, false, false, false},
		{"lock the front door", false, false, true, false},
		{"is the back door open", true, false, false, false},
		{"why did my automation not run", true, false, false, false},
		{"who turned on the hallway light", true, false, false, false},
		{"which updates are available", true, false, false, false},
		{"delete old history", false, true, false, true},
		{"create a scene that turns on the lights", false, false, true, true},
		{"rename the kitchen lamp", false, false, false, true},
		{"", true, false, false, false},
	} {
		in := intentOf(rawWords(tt.query))
		if in.read() != tt.read || in.destroy != tt.destroy || in.control != tt.control || in.configure != tt.configure {
			t.Errorf("intentOf(%q) = %+v (read %v)", tt.query, in, in.read())
		}
	}
}

// TestExpand: a thing in the house brings the words of reading it in a question, of controlling it
// in a command, and nothing when the request sets something up with it; what the request says
// itself counts in full.
func TestExpand(t *testing.T) {
	t.Parallel()
	weights := func(q string) map[string]float64 {
		raw := rawWords(q)
		out := map[string]float64{}
		for _, w := range expand(queryTerms(q), raw, intentOf(raw)) {
			out[w.term] = w.weight
		}
		return out
	}
	for _, tt := range []struct {
		query string
		has   map[string]float64
		not   []string
	}{
		{"dim the lamp", map[string]float64{"lamp": 1, "light": relatedWeight, "servic": relatedWeight}, []string{"entity"}},
		{"is the lamp on", map[string]float64{"entity": relatedWeight, "stat": relatedWeight}, []string{"servic"}},
		{"rename the lamp", map[string]float64{"name": relatedWeight}, []string{"servic", "entity"}},
		{"light history", map[string]float64{"history": 1}, nil},
		{"who turned on the light", map[string]float64{"caus": relatedWeight, "logbook": relatedWeight}, nil},
	} {
		got := weights(tt.query)
		for term, w := range tt.has {
			if got[term] != w {
				t.Errorf("%q: %s weighs %v, want %v (%v)", tt.query, term, got[term], w, got)
			}
		}
		for _, term := range tt.not {
			if _, ok := got[term]; ok {
				t.Errorf("%q: expands to %s (%v)", tt.query, term, got)
			}
		}
	}
}

// TestSearchPriors: between tools that match alike, a read request gets the reading tool before a
// destructive one, and a request that does not name the hub gets Home Assistant's tool first.
func TestSearchPriors(t *testing.T) {
	t.Parallel()
	tool := func(name, descr string, ro, destructive bool) *Tool {
		return Define(Spec[noteArgs, string]{Name: name, Toolset: "t", Description: descr, ReadOnly: ro, Destructive: destructive,
			Handler: func(context.Context, *Call, noteArgs) (string, error) { return "", nil }})
	}
	ix := newIndex([]*Tool{
		tool("t_history", "Temperature history of a sensor.", true, false),
		tool("t_purge_history", "Purge temperature history of a sensor.", false, true),
		tool("hubitat_lock", "Lock or unlock a door lock.", false, false),
		tool("ha_lock", "Lock or unlock a door lock.", false, false),
	}, nil)
	for _, tt := range []struct{ query, want string }{
		{"temperature history", "t_history"},
		{"purge the temperature history", "t_purge_history"},
		{"lock the door", "ha_lock"},
		{"hubitat lock the door", "hubitat_lock"},
	} {
		if hits := ix.search(tt.query, 4); len(hits) == 0 || hits[0].tool.Name() != tt.want {
			t.Errorf("%q: got %v, want %s first", tt.query, hitNames(hits), tt.want)
		}
	}
}

func hitNames(hits []hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.tool.Name())
	}
	return out
}

// TestSearchAnswerSize: with large tools, the answer keeps to its budget: the first result in full,
// then full ones while they fit, then brief ones with no schema.
func TestSearchAnswerSize(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Turns a light on and says a great deal about it. ", 40)
	var tools []*Tool
	for i := range 12 {
		tools = append(tools, Define(Spec[noteArgs, string]{Name: "t_light_" + string(rune('a'+i)), Toolset: "t", Description: long,
			Handler: func(context.Context, *Call, noteArgs) (string, error) { return "", nil }}))
	}
	got := answer(newIndex(tools, nil).search("light", MaxSearchResults))
	b, _ := json.Marshal(searchResult{Query: "light", Count: len(got), Tools: got, Hint: "run one"})
	if len(b) > 8<<10 {
		t.Fatalf("the answer is %d bytes", len(b))
	}
	full := 0
	for i, f := range got {
		if f.InputSchema != nil {
			if full != i {
				t.Fatalf("a full definition after a brief one: %s", b)
			}
			full++
		} else if len(f.Description) > briefMax+len("…") || f.Annotations != nil {
			t.Fatalf("a brief entry that is not brief: %+v", f)
		}
	}
	if full == 0 || full == len(got) {
		t.Fatalf("%d of %d results in full", full, len(got))
	}
}

func TestFirstSentence(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"Reads a file. Needs the permission.", 100, "Reads a file."},
		{"Reads a file", 100, "Reads a file"},
		{"Reads a very long file name", 12, "Reads a very…"},
		{"Überlänge", 2, "Ü…"},
		{"Überlänge", 3, "Üb…"},
	} {
		if got := firstSentence(tt.in, tt.max); got != tt.want {
			t.Errorf("firstSentence(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

type listArgs struct {
	EntityIDs []string `json:"entity_ids,omitempty" validate:"omitempty,dive,entity_id"`
	Tags      []string `json:"tags,omitempty"`
	Name      string   `json:"name,omitempty"`
	Target    *struct {
		EntityID []string `json:"entity_id,omitempty" validate:"omitempty,dive,entity_id"`
	} `json:"target,omitempty"`
}

// TestLoneStringIsAList: a string where a list of strings is asked for is a list of one (entity
// ids comma-separated, as Home Assistant splits them), at any depth; the caller's map is not
// changed; other strings stay what they are.
func TestLoneStringIsAList(t *testing.T) {
	t.Parallel()
	schema, err := schemaFor[listArgs]()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args map[string]any
		want listArgs
		err  string
	}{
		{map[string]any{"entity_ids": "light.a"}, listArgs{EntityIDs: []string{"light.a"}}, ""},
		{map[string]any{"entity_ids": "light.a, light.b"}, listArgs{EntityIDs: []string{"light.a", "light.b"}}, ""},
		{map[string]any{"tags": "a, b"}, listArgs{Tags: []string{"a, b"}}, ""},
		{map[string]any{"target": map[string]any{"entity_id": "lock.front"}}, listArgs{Target: &struct {
			EntityID []string `json:"entity_id,omitempty" validate:"omitempty,dive,entity_id"`
		}{EntityID: []string{"lock.front"}}}, ""},
		{map[string]any{"name": "x", "entity_ids": []any{"light.a"}}, listArgs{Name: "x", EntityIDs: []string{"light.a"}}, ""},
		{map[string]any{"entity_ids": "Kitchen Light"}, listArgs{}, "entity_ids"},
		{map[string]any{"name": []any{"x"}}, listArgs{}, "name"},
	} {
		before, _ := json.Marshal(tt.args)
		var got listArgs
		err := decodeArgs(tt.args, &got, schema)
		after, _ := json.Marshal(tt.args)
		if string(before) != string(after) {
			t.Errorf("%v: the arguments changed to %s", tt.args, after)
		}
		if tt.err != "" {
			if e := AsError(err); e == nil || !strings.HasPrefix(e.Field, tt.err) {
				t.Errorf("%v: got %v, want an error about %s", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: got %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
}

// TestNoBooleanSchemas: a map of anything has no additionalProperties (not the boolean true), a
// list of anything says what its items are from the items tag, and a struct keeps
// additionalProperties false.
func TestNoBooleanSchemas(t *testing.T) {
	t.Parallel()
	type args struct {
		Data   map[string]any `json:"data,omitempty"`
		Params []any          `json:"params,omitempty" items:"a string or a number"`
	}
	s, err := schemaFor[args]()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), ":true") || !strings.Contains(string(b), `"additionalProperties":false`) ||
		!strings.Contains(string(b), `"items":{"description":"a string or a number"}`) {
		t.Fatalf("schema %s", b)
	}
}

// FuzzListOfOne: whatever arguments arrive, wrapping lone strings never panics, never changes the
// caller's value, and turns only strings into lists.
func FuzzListOfOne(f *testing.F) {
	schema, err := schemaFor[listArgs]()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"entity_ids":"light.a, light.b"}`, `{"target":{"entity_id":"x"}}`, `{"tags":["a",1,null]}`, `{"entity_ids":[[""]]}`, `{"target":"x"}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var args map[string]any
		if json.Unmarshal([]byte(in), &args) != nil {
			return
		}
		before, _ := json.Marshal(args)
		out, changed := listOfOne(args, schema)
		after, _ := json.Marshal(args)
		if string(before) != string(after) {
			t.Fatalf("the arguments changed: %s → %s", before, after)
		}
		if !changed {
			return
		}
		got, _ := json.Marshal(out)
		var m map[string]any
		if json.Unmarshal(got, &m) != nil || len(m) != len(args) {
			t.Fatalf("%s → %s", before, got)
		}
		for k, v := range args {
			if _, isString := v.(string); !isString && !slices.Contains([]string{"target"}, k) && !reflect.DeepEqual(v, m[k]) {
				t.Fatalf("%s changed at %s: %s", before, k, got)
			}
		}
	})
}

// A request in another system's own words names that system, word by word.
func TestSystemNamedBy(t *testing.T) {
	for _, c := range []struct{ query, want string }{
		{"set the private boolean of the bedtime rule to false", "hubitat"},
		{"disarm the HSM's away mode", "hubitat"},
		{"what is in the Maker API app", "hubitat"},
		{"list the Rule-Machine rules", "hubitat"},
		{"a private booleans list", ""}, // not the phrase
		{"chsm status", ""},
		{"arm the alarm", ""},
		{"rename the kitchen lamp", ""},
		{"", ""},
	} {
		if got := systemNamedBy(c.query); got != c.want {
			t.Errorf("%q: %q, want %q", c.query, got, c.want)
		}
	}
}
