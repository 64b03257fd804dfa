package rules

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func intp(n int) *int { return &n }

// ruleWith wraps one trigger, condition or action in an otherwise minimal rule.
func ruleWith(trigger, condition, action string) string {
	if trigger == "" {
		trigger = `{"type":"periodic","interval":5}`
	}
	if action == "" {
		action = `{"type":"stop"}`
	}
	conds := ""
	if condition != "" {
		conds = `,"conditions":[` + condition + `]`
	}
	return `{"name":"r","triggers":[` + trigger + `]` + conds + `,"actions":[` + action + `]}`
}

func TestDecodeFoldsUpstreamSpellings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		trigger string
		want    Trigger
	}{
		{"type sunrise", `{"type":"sunrise","offset":15}`, Trigger{Type: "time", Sunrise: true, Offset: 15}},
		{"type sunset", `{"type":"sunset"}`, Trigger{Type: "time", Sunset: true}},
		{"type sun with event", `{"type":"sun","event":"sunset","offset":-20}`, Trigger{Type: "time", Sunset: true, Offset: -20}},
		{"time sunrise", `{"type":"time","time":"sunrise"}`, Trigger{Type: "time", Sunrise: true}},
		{"time with an offset", `{"type":"time","time":"sunset-30"}`, Trigger{Type: "time", Sunset: true, Offset: -30}},
		{"sunEvent and offsetMinutes", `{"type":"time","sunEvent":"sunrise","offsetMinutes":10}`, Trigger{Type: "time", Sunrise: true, Offset: 10}},
		{"clock padded", `{"type":"time","time":"7:05"}`, Trigger{Type: "time", Time: "07:05"}},
		{"duration in minutes", `{"type":"device_event","deviceId":"12","attribute":"motion","durationValue":5,"durationUnit":"minutes"}`,
			Trigger{Type: "device_event", DeviceID: "12", Attribute: "motion", Duration: 300}},
		{"duration wins over the UI's pair", `{"type":"device_event","deviceId":"12","attribute":"motion","duration":90,"durationValue":2,"durationUnit":"minutes"}`,
			Trigger{Type: "device_event", DeviceID: "12", Attribute: "motion", Duration: 90}},
		{"operator symbol", `{"type":"device_event","deviceId":12,"attribute":"switch","operator":"==","value":"on"}`,
			Trigger{Type: "device_event", DeviceID: "12", Attribute: "switch", Operator: "equals", Value: S("on")}},
		{"ids as numbers", `{"type":"device_event","deviceIds":[12,13],"attribute":"motion","operator":"!=","value":1}`,
			Trigger{Type: "device_event", DeviceIDs: []string{"12", "13"}, Attribute: "motion", Operator: "not_equals", Value: N(1)}},
		{"button defaults to pushed", `{"type":"button_event","deviceId":"17","buttonNumber":"2"}`,
			Trigger{Type: "button_event", DeviceID: "17", Action: "pushed", ButtonNumber: intp(2)}},
		{"periodic unit default and plural", `{"type":"periodic","interval":"2","unit":"Hour"}`, Trigger{Type: "periodic", Interval: 2, Unit: "hours"}},
		{"periodic unit default", `{"type":"periodic","interval":5}`, Trigger{Type: "periodic", Interval: 5, Unit: "minutes"}},
		{"gate folded", `{"type":"mode_change","condition":{"type":"time_range","startTime":"sunset - 30","endTime":"6:00"}}`,
			Trigger{Type: "mode_change", Condition: &Condition{Type: "time_range", Start: "sunset-30", End: "06:00"}}},
		{"boolean as text", `{"type":"time","sunset":"true"}`, Trigger{Type: "time", Sunset: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustDecode(t, ruleWith(tc.trigger, "", ""))
			if !reflect.DeepEqual(r.Triggers[0], tc.want) {
				t.Fatalf("got  %+v\nwant %+v", r.Triggers[0], tc.want)
			}
		})
	}
}

func TestDecodeFoldsConditionsAndActions(t *testing.T) {
	t.Parallel()
	r := mustDecode(t, ruleWith("",
		`{"type":"time_range","startTime":"22:00","endTime":"sunrise+15"}`,
		`{"type":"if_then_else","condition":{"type":"device_state","deviceId":1,"attribute":"level","operator":"!=","value":"50"},
		  "thenActions":[{"type":"repeat","count":3,"actions":[{"type":"repeat","count":"2","actions":[{"type":"http_request","url":"http://x","method":"post","body":"b"}]}]}]}`))
	if c := r.Conditions[0]; c.Start != "22:00" || c.End != "sunrise+15" {
		t.Errorf("time_range: %+v", c)
	}
	a := r.Actions[0]
	if a.Condition.Operator != "not_equals" || a.Condition.DeviceID != "1" || a.Condition.Value.Numeric {
		t.Errorf("if condition: %+v", a.Condition)
	}
	outer := a.ThenActions[0]
	if outer.Times != 3 || outer.Actions[0].Times != 2 || outer.Actions[0].Actions[0].Method != "POST" {
		t.Errorf("repeat count: %+v", outer)
	}
	if r.ConditionLogic != "all" {
		t.Errorf("conditionLogic defaults to all, got %q", r.ConditionLogic)
	}
	d := mustDecode(t, ruleWith("", `{"type":"days_of_week","days":["mon","SATURDAY","Sun"]}`, ""))
	if got := d.Conditions[0].Days; !reflect.DeepEqual(got, []string{"Monday", "Saturday", "Sunday"}) {
		t.Errorf("days: %v", got)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, raw string
		want      []string // "path: message part", in order
	}{
		{"not JSON", `{"name":`, []string{"not valid JSON"}},
		{"two values", `{} {}`, []string{"more than one JSON value"}},
		{"not an object", `[1]`, []string{"a rule must be an object, not a list"}},
		{"singular for plural", `{"name":"x","trigger":[]}`, []string{`trigger: unknown field; did you mean "triggers"?`}},
		{"near miss", ruleWith(`{"type":"device_event","DeviceId":"1","attribute":"switch"}`, "", ""),
			[]string{`triggers[0].DeviceId: unknown field; did you mean "deviceId"?`}},
		{"plural condition in if_then_else", ruleWith("", "", `{"type":"if_then_else","conditions":[],"thenActions":[{"type":"stop"}]}`),
			[]string{`actions[0].conditions: unknown field; did you mean "condition"?`}},
		{"deep unknown field", ruleWith("", "", `{"type":"repeat","times":2,"actions":[{"type":"set_level","deviceId":"1","levle":5}]}`),
			[]string{"actions[0].actions[0].levle: unknown field: a set_level takes deviceId, level, duration"}},
		{"unknown top-level field", `{"name":"x","rules":[]}`, []string{"rules: unknown field: allowed here are id, name"}},
		{"unknown field of an unknown type", ruleWith("", "", `{"type":"dance","moves":3}`),
			[]string{"actions[0].moves: unknown field: allowed here are type, deviceId"}},
		{"wrong kinds", `{"name":["x"],"enabled":"yes","triggers":{},"actions":[{"type":"delay","seconds":1.5},{"type":"set_level","level":{"x":1}}]}`,
			[]string{"actions[0].seconds: must be a whole number", "actions[1].level: must be a string, number or boolean, not an object",
				"enabled: must be true or false", "name: must be a string, not a list", "triggers: must be a list, not an object"}},
		{"null in a list", `{"name":"x","triggers":[null],"actions":[]}`, []string{"triggers[0]: must not be null"}},
		{"local variable not a scalar", `{"name":"x","localVariables":{"a":[1]}}`, []string{"localVariables.a: must be a string, number or boolean, not a list"}},
		{"bad sun event", ruleWith(`{"type":"sun","event":"noon"}`, "", ""), []string{"triggers[0].event: must be sunrise or sunset"}},
		{"bad sunEvent", ruleWith(`{"type":"time","sunEvent":"dusk"}`, "", ""), []string{"triggers[0].sunEvent: must be sunrise or sunset"}},
		{"offset twice", ruleWith(`{"type":"sunset","offset":5,"offsetMinutes":10}`, "", ""), []string{"triggers[0].offsetMinutes: is another name for offset"}},
		{"durationValue without a unit", ruleWith(`{"type":"device_event","deviceId":"1","attribute":"switch","durationValue":3}`, "", ""),
			[]string{"triggers[0].durationUnit: is required with durationValue"}},
		{"durationUnit unknown", ruleWith(`{"type":"device_event","deviceId":"1","attribute":"switch","durationValue":3,"durationUnit":"fortnights"}`, "", ""),
			[]string{"triggers[0].durationUnit: must be seconds, minutes or hours"}},
		{"huge number", ruleWith("", "", `{"type":"delay","seconds":1e300}`), []string{"actions[0].seconds: must be a whole number"}},
		{"not finite", ruleWith("", "", `{"type":"set_color","hue":"NaN","saturation":"Inf"}`),
			[]string{"actions[0].hue: must be a number", "actions[0].saturation: must be a number"}},
		{"bad time", `{"createdAt":"yesterday"}`, []string{"createdAt: must be a time"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Decode([]byte(tc.raw))
			var probs Problems
			if !errors.As(err, &probs) {
				t.Fatalf("want Problems, got %v", err)
			}
			if len(probs) != len(tc.want) {
				t.Fatalf("want %d problems, got\n%v", len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.Contains(probs[i].String(), w) {
					t.Errorf("problem %d: want …%s…, got %s", i, w, probs[i])
				}
			}
		})
	}
}

// A decoded rule encodes and decodes to itself: what the engine stores is what it reads back.
func TestDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	r := mustDecode(t, everyTypeRule)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	again := mustDecode(t, string(b))
	if !reflect.DeepEqual(r, again) {
		t.Fatalf("round trip changed the rule:\n%+v\n%+v", r, again)
	}
	if n := r.Triggers[2].Value; !n.Numeric || n.Text != "100" {
		t.Errorf("a numeric value stays numeric: %+v", n)
	}
	if v := r.LocalVariables["count"]; v != float64(0) {
		t.Errorf("local variable count: %#v", v)
	}
}

// TestDecodeLists: each list of a rule decodes with paths that name the list and the item.
func TestDecodeLists(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		field string // the rule member, with its JSON value
		check func(Rule) bool
		err   string // the error's prefix; "" for none
	}{
		{name: "repeat's count is its times", field: `"actions":[{"type":"repeat","count":2,"actions":[{"type":"stop"}]}]`,
			check: func(r Rule) bool { return r.Actions[0].Times == 2 }},
		{name: "a misspelt field is named with its path", field: `"actions":[{"type":"stop"},{"type":"log","mesage":"x"}]`,
			err: "actions[1].mesage: unknown field"},
		{name: "triggers fold upstream's shapes", field: `"triggers":[{"type":"sunset"},{"type":"button_event","deviceId":3}]`,
			check: func(r Rule) bool {
				return r.Triggers[0].Sunset && r.Triggers[1].Action == "pushed" && r.Triggers[1].DeviceID == "3"
			}},
		{name: "a list given as an object", field: `"triggers":{"type":"sunset"}`,
			err: "triggers: must be a list, not an object"},
		{name: "conditions fold operators and keep booleans", field: `"conditions":[{"type":"variable","variableName":"x","operator":"==","value":true}]`,
			check: func(r Rule) bool { return r.Conditions[0].Operator == "equals" && r.Conditions[0].Value.Bool }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Decode([]byte(`{"name":"lists",` + tc.field + `}`))
			switch {
			case tc.err != "":
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
			case err != nil || !tc.check(r):
				t.Fatalf("Decode: %v %+v", err, r)
			}
		})
	}
}

func TestParseTimeSpec(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // canonical form, "" for an error
	}{
		{"07:30", "07:30"}, {"7:30", "07:30"}, {"23:59", "23:59"}, {"00:00", "00:00"},
		{"sunrise", "sunrise"}, {"Sunset", "sunset"}, {"sunset-30", "sunset-30"}, {"sunrise + 15", "sunrise+15"},
		{"sunset+0", "sunset"}, {"sunset-180", "sunset-180"},
		{"24:00", ""}, {"12:60", ""}, {"7:5", ""}, {"123:00", ""}, {"-1:30", ""}, {"+7:30", ""}, {"noon", ""},
		{"sunset-181", ""}, {"sunset--5", ""}, {"sunset+-5", ""}, {"sunset 30", ""}, {"sunset-", ""}, {"", ""},
	}
	for _, tc := range cases {
		ts, err := ParseTimeSpec(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%q: want an error, got %v", tc.in, ts)
		case tc.want != "" && (err != nil || ts.String() != tc.want):
			t.Errorf("%q: want %s, got %v (%v)", tc.in, tc.want, ts, err)
		}
	}
}
