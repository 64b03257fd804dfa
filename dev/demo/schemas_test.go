package demo_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestTypeScriptClientAcceptsEverySchema: the official TypeScript SDK client lists every tool
// without complaint, and Ajv in strict mode compiles every input schema under JSON Schema 2020-12
// and draft-07. A schema a strict validator refuses is one some client will refuse.
func TestTypeScriptClientAcceptsEverySchema(t *testing.T) {
	t.Parallel()
	node, modules := nodeWithSDK(t)
	e := startDemo(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "testdata/schema_check.cjs", e.url+"/mcp", e.d.Info.Token)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.Output()
	var got struct {
		Tools    int      `json:"tools"`
		Problems []string `json:"problems"`
		Error    string   `json:"error"`
	}
	if jerr := json.Unmarshal(out, &got); jerr != nil || err != nil || got.Error != "" {
		t.Fatalf("schema check: %v %v %s %s", err, jerr, got.Error, out)
	}
	if got.Tools < 60 {
		t.Errorf("the TypeScript client listed %d tools", got.Tools)
	}
	for _, p := range got.Problems {
		t.Error(p)
	}
}
