package completion

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRank(t *testing.T) {
	t.Parallel()
	cands := []Candidate{{Value: "sensor.kitchen_temp"}, {Value: "light.k1", Label: "Kitchen lamp"}, {Value: "kitchen.x"},
		{Value: "switch.backitchen"}, {Value: "light.porch"}, {Value: "kitchen.x"}}
	many := make([]Candidate, 250)
	for i := range many {
		many[i] = Candidate{Value: fmt.Sprintf("sensor.s%03d", i)}
	}
	tests := []struct {
		name      string
		cands     []Candidate
		typed     string
		want      []string
		wantTotal int
	}{
		{"prefix, then word start or label, then substring; duplicates once", cands, "Kit",
			[]string{"kitchen.x", "light.k1", "sensor.kitchen_temp", "switch.backitchen"}, 4},
		{"nothing typed lists all, sorted", cands[:2], "", []string{"light.k1", "sensor.kitchen_temp"}, 2},
		{"no match is an empty list, not null", cands, "zzz", []string{}, 0},
		{"capped at the maximum with the total", many, "sensor.", nil, 250},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, total := Rank(tt.cands, tt.typed, MaxValues)
			if got == nil || total != tt.wantTotal || (tt.want != nil && !slices.Equal(got, tt.want)) || len(got) > MaxValues {
				t.Errorf("got %v (%d of %d), want %v of %d", got, len(got), total, tt.want, tt.wantTotal)
			}
		})
	}
}

func TestHandlerChecksTheRef(t *testing.T) {
	t.Parallel()
	broken := func(context.Context, map[string]string) ([]Candidate, error) { return nil, errors.New("backend down") }
	services := func(_ context.Context, resolved map[string]string) ([]Candidate, error) {
		if resolved["domain"] == "light" {
			return []Candidate{{Value: "turn_on"}, {Value: "toggle"}}, nil
		}
		return []Candidate{{Value: "light.turn_on"}, {Value: "switch.toggle"}}, nil
	}
	h := Handler(
		NewSet().Prompt("p", map[string]Source{"color": Values("red", "green")}).Template("t://{id}", nil),
		NewSet().Prompt("q", map[string]Source{"x": broken, "service": services}),
	)
	tests := []struct {
		name     string
		ref      *mcp.CompleteReference
		arg, val string
		ctx      map[string]string
		want     []string
		code     int64
	}{
		{"prompt argument", &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, "color", "gr", nil, []string{"green"}, 0},
		{"free-text argument", &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, "note", "a", nil, []string{}, 0},
		{"template without sources", &mcp.CompleteReference{Type: "ref/resource", URI: "t://{id}"}, "id", "1", nil, []string{}, 0},
		{"second set", &mcp.CompleteReference{Type: "ref/prompt", Name: "q"}, "service", "sw", nil, []string{"switch.toggle"}, 0},
		{"context narrows", &mcp.CompleteReference{Type: "ref/prompt", Name: "q"}, "service", "t", map[string]string{"domain": "light"}, []string{"toggle", "turn_on"}, 0},
		{"backend down answers empty", &mcp.CompleteReference{Type: "ref/prompt", Name: "q"}, "x", "", nil, []string{}, 0},
		{"unknown prompt", &mcp.CompleteReference{Type: "ref/prompt", Name: "nope"}, "color", "", nil, nil, jsonrpc.CodeInvalidParams},
		{"unknown template", &mcp.CompleteReference{Type: "ref/resource", URI: "t://{other}"}, "id", "", nil, nil, jsonrpc.CodeInvalidParams},
		{"missing ref", nil, "color", "", nil, nil, jsonrpc.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &mcp.CompleteParams{Ref: tt.ref, Argument: mcp.CompleteParamsArgument{Name: tt.arg, Value: tt.val}}
			if tt.ctx != nil {
				p.Context = &mcp.CompleteContext{Arguments: tt.ctx}
			}
			res, err := h(context.Background(), &mcp.CompleteRequest{Params: p})
			var je *jsonrpc.Error
			switch {
			case tt.code != 0:
				if !errors.As(err, &je) || je.Code != tt.code {
					t.Fatalf("got %v, want JSON-RPC error %d", err, tt.code)
				}
			case err != nil:
				t.Fatal(err)
			case res.Completion.Values == nil || !slices.Equal(res.Completion.Values, tt.want):
				t.Errorf("got %#v, want %v", res.Completion.Values, tt.want)
			}
		})
	}
}
