package hubitattools

import (
	"encoding/json"
	"testing"
)

// TestHubCareDefinitionSizes: each definition stays within the budget a tools/list can afford.
func TestHubCareDefinitionSizes(t *testing.T) {
	for _, tool := range hubCareTools(Deps{}) {
		b, err := json.Marshal(tool.Definition())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", tool.Definition().Name, len(b))
		if len(b) > 1400 {
			t.Errorf("%s: definition is %d bytes, over 1,400", tool.Definition().Name, len(b))
		}
	}
}
