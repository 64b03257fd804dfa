package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// Rules come from a model, an upstream export or the store: the decoder and the validator read
// anything without panicking, and what they accept survives storing and exporting unchanged.

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		everyTypeRule, refsRule,
		ruleWith(`{"type":"sun","event":"sunrise","offsetMinutes":"-5"}`, `{"type":"time_range","startTime":"sunset - 30","endTime":"7:00"}`, `{"type":"repeat","count":3,"actions":[{"type":"stop"}]}`),
		ruleWith(`{"type":"device_event","deviceIds":[1,2],"attribute":"switch","operator":"!=","value":"on","durationValue":2,"durationUnit":"minutes"}`, "", ""),
		ruleWith(`{"type":"time","time":"sunset+15"}`, `{"type":"days_of_week","days":["mon"]}`, `{"type":"http_request","url":"https://example.com","method":"post","body":"x"}`),
		`{"name":"x","triggers":[{"type":"periodic","interval":5}],"actions":[` + nest(9, `{"type":"stop"}`) + `]}`,
		`{"name":"x","localVariables":{"a":1e308,"b":"%c%","c":true}}`,
		`{}`, `[]`, `null`, `{"name":"\u0000"}`, `{"triggers":[{"type":"time","time":"24:00"}]}`,
	} {
		f.Add([]byte(s))
	}
}

// canonical is a rule as JSON: the form the store and an export hold.
func canonical(t *testing.T, r Rule) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("a decoded rule does not encode: %v", err)
	}
	return b
}

func FuzzDecode(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := Decode(raw)
		if err != nil {
			var probs Problems
			if !errors.As(err, &probs) || len(probs) == 0 {
				t.Fatalf("a decode error is not Problems: %v", err)
			}
			for _, p := range probs {
				if p.Message == "" {
					t.Fatalf("a problem without a message at %q", p.Path)
				}
			}
			return
		}
		b := canonical(t, r)
		again, err := Decode(b)
		if err != nil {
			t.Fatalf("a decoded rule does not decode again: %v\n%s", err, b)
		}
		if b2 := canonical(t, again); !bytes.Equal(b, b2) {
			t.Fatalf("decode is not stable:\n%s\n%s", b, b2)
		}
	})
}

func FuzzValidate(f *testing.F) {
	fuzzSeeds(f)
	devices := simLookup(f)
	roots := []string{"", "name", "description", "conditionLogic", "triggers", "conditions", "actions", "localVariables"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := Decode(raw)
		if err != nil {
			return
		}
		probs := Validate(&r, devices)
		for _, p := range probs {
			root, _, _ := strings.Cut(p.Path, ".")
			root, _, _ = strings.Cut(root, "[")
			if !strings.Contains(" "+strings.Join(roots, " ")+" ", " "+root+" ") || p.Message == "" {
				t.Fatalf("problem %v: not a path of the rule", p)
			}
		}
		if len(probs) > 0 {
			return
		}
		// A valid rule re-encodes and decodes to the same rule, and is still valid.
		b := canonical(t, r)
		again, err := Decode(b)
		if err != nil {
			t.Fatalf("a valid rule does not decode again: %v\n%s", err, b)
		}
		if !bytes.Equal(b, canonical(t, again)) {
			t.Fatalf("a valid rule changed on the way through JSON:\n%s", b)
		}
		if probs := Validate(&again, devices); len(probs) > 0 {
			t.Fatalf("valid, then not: %v", Problems(probs))
		}
		// Exported and imported unmapped, it is the same rule without its runtime fields.
		eb, err := json.Marshal(ExportRule(r, devices, "fuzz", time.Unix(0, 0)))
		if err != nil {
			t.Fatal(err)
		}
		e, err := DecodeExport(eb)
		if err != nil {
			t.Fatalf("an export does not decode: %v\n%s", err, eb)
		}
		imported, iprobs := ImportRule(e, "", nil)
		want := r.Copy()
		clearRuntime(&want)
		if len(iprobs) > 0 || !bytes.Equal(canonical(t, imported), canonical(t, want)) {
			t.Fatalf("export and import changed the rule (%v):\n%s\n%s", iprobs, canonical(t, imported), canonical(t, want))
		}
	})
}

func FuzzParseTimeSpec(f *testing.F) {
	for _, s := range []string{"07:30", "7:30", "sunset-30", "sunrise + 15", "sunset", "24:00", "sunset-181", "", "sunrise+", "٣:30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTimeSpec(s)
		if err != nil {
			return
		}
		if ts.Sun == "" && (ts.Minutes < 0 || ts.Minutes >= 24*60) || ts.Sun != "" && (ts.Minutes < -MaxOffset || ts.Minutes > MaxOffset) {
			t.Fatalf("%q read as %+v", s, ts)
		}
		again, err := ParseTimeSpec(ts.String())
		if err != nil || again != ts {
			t.Fatalf("%q → %q → %+v, %v", s, ts.String(), again, err)
		}
	})
}
