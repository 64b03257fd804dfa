package hatools

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/homeassistant"
)

// FuzzTraceSummaries feeds what Home Assistant returns (trace steps, service descriptions) to the
// summaries the model reads: they must never panic, never split a UTF-8 character, and stay short.
func FuzzTraceSummaries(f *testing.F) {
	f.Add([]byte(`{"params":{"domain":"light","service":"turn_on","service_data":{"brightness_pct":60},"target":{"entity_id":"light.hallway"}},"running_script":false}`),
		[]byte(`{"brightness_pct":{"required":true,"example":47,"selector":{"number":{"min":0,"max":100,"unit_of_measurement":"%"}}},"advanced":{"collapsed":true,"fields":{"flash":{"selector":{"select":{"options":["short","long"]}}}}}}`),
		[]byte(`{"entity":[{"domain":["light","switch"]}]}`))
	f.Add([]byte(`{"result":false,"state":"off","wanted_state":"on"}`), []byte(`{"x":{"selector":null,"fields":{"y":{}}}}`), []byte(`{"entity":{"domain":"lock"}}`))
	f.Add([]byte(`{"trigger":{"platform":null},"this":{"state":"on"}}`), []byte(`[]`), []byte(`null`))
	f.Fuzz(func(t *testing.T, result, fields, target []byte) {
		var r map[string]json.RawMessage
		if json.Unmarshal(result, &r) == nil {
			for _, s := range []string{clip(resultSummary(r)), clip(varsSummary(r))} {
				if !utf8.ValidString(s) && utf8.Valid(result) || len(s) > traceTextMax+len("…(truncated)") {
					t.Fatalf("summary %q", s)
				}
			}
			_ = stepView(homeassistant.TraceStep{Result: r, ChangedVariables: r})
		}
		var fs map[string]json.RawMessage
		if json.Unmarshal(fields, &fs) == nil {
			_ = fieldLines(fs)
		}
		_ = targetDomains(target)
		if s := firstSentence(string(result)); utf8.Valid(result) && !utf8.ValidString(s) {
			t.Fatalf("firstSentence split a character: %q", s)
		}
	})
}
