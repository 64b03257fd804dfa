package hatools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/homeassistant"
)

// FuzzIntegrationFlowView reads any flow answer Home Assistant could send: the view never
// panics, and never shows a default or placeholder that a secret field or key holds.
func FuzzIntegrationFlowView(f *testing.F) {
	f.Add(`{"type":"form","flow_id":"a","handler":"shelly","step_id":"credentials","data_schema":[{"type":"string","name":"password","required":true,"default":"hunter2"}],"errors":{"base":"invalid_auth"}}`)
	f.Add(`{"type":"form","data_schema":[{"selector":{"text":{"type":"password"}},"name":"key","description":{"suggested_value":"s3cret"}}],"description_placeholders":{"token":"abc","url":"http://x"}}`)
	f.Add(`{"type":"menu","menu_options":{"a":"A","b":"B"}}`)
	f.Add(`{"type":"menu","menu_options":["a","b"]}`)
	f.Add(`{"type":"create_entry","title":"x","result":{"entry_id":"1","domain":"hue","title":"Hue","state":"loaded","source":"user"}}`)
	f.Add(`{"type":"form","data_schema":[{"type":"select","options":[["a","A"],{"value":"b"},3],"name":"p"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var res homeassistant.FlowResult
		if json.Unmarshal([]byte(body), &res) != nil {
			return
		}
		v := viewFlow(res)
		for _, fl := range v.Fields {
			if fl.Secret && fl.Default != nil {
				t.Fatalf("secret field %s shows a default: %v", fl.Name, fl.Default)
			}
		}
		for k := range v.Placeholders {
			if secretName(k) {
				t.Fatalf("secret placeholder %s shown", k)
			}
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("view does not encode: %v", err)
		}
	})
}

// FuzzIntegrationSummary: the audit summary names the fields a flow step fills in, never what
// was typed into them.
func FuzzIntegrationSummary(f *testing.F) {
	f.Add("flow_step", "password", "hunter2")
	f.Add("flow_step", "host", "192.168.1.70")
	f.Fuzz(func(t *testing.T, action, key, value string) {
		const mark = "VALUE-MARK:"
		if strings.Contains(action+key, mark) {
			return
		}
		s := integrationSummary(manageIntegrationsArgs{Action: action, FlowID: "f1", UserInput: map[string]any{key: mark + value, "other": []any{mark + value}}})
		if strings.Contains(s, mark) {
			t.Fatalf("the summary carries a value: %q", s)
		}
	})
}
