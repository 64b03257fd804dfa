package toolkit

import (
	"encoding/json"
	"strings"
	"testing"
)

// rulesArgs carries every validate rule the tools use, so the test below sees each reach the schema.
type rulesArgs struct {
	IDs     []string `json:"ids,omitempty" jsonschema:"entities" validate:"omitempty,min=1,max=50,dive,entity_id"`
	Domains []string `json:"domains,omitempty" validate:"omitempty,max=5,dive,domain"`
	Domain  string   `json:"domain,omitempty" validate:"omitempty,domain"`
	Link    string   `json:"link,omitempty" validate:"omitempty,url"`
	Web     string   `json:"web,omitempty" jsonschema:"where to fetch from" validate:"omitempty,http_url"`
	Start   string   `json:"start,omitempty" jsonschema:"when to begin" validate:"omitempty,iso8601"`
	Said    string   `json:"said,omitempty" jsonschema:"ISO-8601 end" validate:"omitempty,iso8601"`
	Ratio   float64  `json:"ratio,omitempty" validate:"omitempty,gt=0,lt=1"`
	Code    string   `json:"code,omitempty" validate:"omitempty,len=4"`
	Name    string   `json:"name,omitempty" validate:"required,max=40"`
	Levels  []int    `json:"levels,omitempty" validate:"omitempty,dive,gte=0,lte=255"`
	Nested  *struct {
		Mode string `json:"mode" validate:"oneof=a b"`
	} `json:"nested,omitempty"`
}

func TestSchemaSaysEveryRule(t *testing.T) {
	s, err := schemaFor[rulesArgs]()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(s)
	p := s.Properties
	tests := []struct {
		name string
		ok   bool
	}{
		{"dive: items carry the entity id pattern", p["ids"].Items != nil && p["ids"].Items.Pattern == entityIDRe.String()},
		{"slice min/max become minItems/maxItems", p["ids"].MinItems != nil && *p["ids"].MinItems == 1 && p["ids"].MaxItems != nil && *p["ids"].MaxItems == 50},
		{"dive: domain pattern on items", p["domains"].Items.Pattern == domainRe.String() && *p["domains"].MaxItems == 5},
		{"domain pattern", p["domain"].Pattern == domainRe.String()},
		{"url format", p["link"].Format == "uri"},
		{"http_url format and description", p["web"].Format == "uri" && strings.Contains(p["web"].Description, "http(s)")},
		{"iso8601 described when the description does not say it", strings.Contains(p["start"].Description, "ISO-8601")},
		{"iso8601 not repeated", strings.Count(p["said"].Description, "ISO-8601") == 1},
		{"gt/lt exclusive bounds", p["ratio"].ExclusiveMinimum != nil && *p["ratio"].ExclusiveMinimum == 0 && *p["ratio"].ExclusiveMaximum == 1},
		{"len on a string", *p["code"].MinLength == 4 && *p["code"].MaxLength == 4},
		{"required with omitempty is required", strings.Contains(strings.Join(s.Required, ","), "name")},
		{"dive numeric bounds on items", *p["levels"].Items.Minimum == 0 && *p["levels"].Items.Maximum == 255},
		{"nested oneof enum", len(p["nested"].Properties["mode"].Enum) == 2},
		{"no type arrays", !strings.Contains(string(raw), `"type":[`)},
	}
	for _, tt := range tests {
		if !tt.ok {
			t.Errorf("%s: schema %s", tt.name, raw)
		}
	}
}
