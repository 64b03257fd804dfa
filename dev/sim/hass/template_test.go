package hass

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

func testSnapshot(t testing.TB) *home.Snapshot {
	t.Helper()
	now := time.Date(2026, 5, 6, 10, 30, 0, 0, time.UTC) // 12:30 in Amsterdam
	h, err := home.New(home.Options{Seed: 11, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []home.ServiceCall{
		{Domain: "light", Service: "turn_on", Data: map[string]any{"entity_id": "light.kitchen_ceiling", "brightness": 200}},
		{Domain: "light", Service: "turn_off", Data: map[string]any{"entity_id": "light.hallway"}},
		{Domain: "lock", Service: "lock", Data: map[string]any{"entity_id": "lock.front_door"}},
		{Domain: "climate", Service: "set_temperature", Data: map[string]any{"entity_id": "climate.living_room", "temperature": 21.5}},
	} {
		if _, err := h.CallService(c); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := h.SetState("sensor.test_value", "3.14159", map[string]any{"unit_of_measurement": "W"}, false, ""); err != nil {
		t.Fatal(err)
	}
	return h.Snapshot()
}

func TestTemplateRendering(t *testing.T) {
	t.Parallel()
	snap := testSnapshot(t)
	cases := []struct{ src, want string }{
		{"plain text", "plain text"},
		{"{{ states('light.kitchen_ceiling') }}", "on"},
		{"{{ states('light.missing') }}", "unknown"},
		{"{{ states.light.kitchen_ceiling.state }}", "on"},
		{"{{ states.light.kitchen_ceiling.attributes.brightness }}", "200"},
		{"{{ states.light.kitchen_ceiling.name }}", "Kitchen Ceiling"},
		{"{{ states.light.nope.state }}", ""},
		{"{{ state_attr('climate.living_room', 'temperature') }}", "21.5"},
		{"{{ state_attr('climate.living_room', 'nope') }}", "None"},
		{"{{ is_state('lock.front_door', 'locked') }}", "True"},
		{"{{ is_state('lock.front_door', ['unlocked', 'locked']) }}", "True"},
		{"{{ is_state_attr('light.kitchen_ceiling', 'brightness', 200) }}", "True"},
		{"{{ has_value('light.nope') }}", "False"},
		{"{{ states('sensor.test_value') | float | round(2) }}", "3.14"},
		{"{{ states('sensor.test_value') | float(0) * 2 }}", "6.28318"},
		{"{{ 'abc' | float(5) }}", "5"},
		{"{{ '7' | int + 1 }}", "8"},
		{"{{ '7.9' | int }}", "7"},
		{"{{ 2.5 | round }}", "2"},
		{"{{ 3.5 | round }}", "4"},
		{"{{ 10 / 4 }} {{ 10 // 4 }} {{ 10 % 4 }} {{ 2 ** 10 }} {{ -7 // 2 }}", "2.5 2 2 1024 -4"},
		{"{{ 1 < 2 and 2 <= 2 and not 3 > 4 }}", "True"},
		{"{{ 'b' in 'abc' }} {{ 4 in [1,2] }} {{ 'x' not in {'x': 1} }}", "True False False"},
		{"{{ 'Hello' ~ ' ' ~ 42 }}", "Hello 42"},
		{"{{ 'MiXeD' | lower }} {{ 'up' | upper }} {{ 'a title' | title }}", "mixed UP A Title"},
		{"{{ [3, 1, 2] | sort | list }}", "[1, 2, 3]"},
		{"{{ ['a', 'b'] | join('-') }}", "a-b"},
		{"{{ {'k': 'v', 'n': none} }}", "{'k': 'v', 'n': None}"},
		{"{{ none }} {{ true }} {{ 1.0 }} {{ 1e20 }} {{ 0.1 + 0.2 }}", "None True 1.0 1e+20 0.30000000000000004"},
		{"{{ undefined_name | default('fallback') }}", "fallback"},
		{"{{ '' | default('empty', true) }}", "empty"},
		{"{% if is_state('light.hallway', 'on') %}on{% elif states('lock.front_door') == 'locked' %}locked{% else %}other{% endif %}", "locked"},
		{"{% for s in states.lock %}{{ s.entity_id }}={{ s.state }}{% if not loop.last %},{% endif %}{% endfor %}", "lock.back_door=unlocked,lock.front_door=locked"},
		{"{% for i in range(3) %}{{ loop.index }}{% else %}none{% endfor %}", "123"},
		{"{% for i in [] %}x{% else %}none{% endfor %}", "none"},
		{"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}{{ v }}{% endfor %}", "a1b2"},
		{"{% for x in [1,2,3,4] if x is even %}{{ x }}{% endfor %}", "24"},
		{"{% set n = 5 %}{{ n * 2 }}", "10"},
		{"{% set ns = namespace(c=0) %}{% for s in states.lock %}{% if s.state == 'locked' %}{% set ns.c = ns.c + 1 %}{% endif %}{% endfor %}{{ ns.c }}", "1"},
		{"{{ states.lock | selectattr('state', 'eq', 'locked') | map(attribute='entity_id') | list }}", "['lock.front_door']"},
		{"{{ states.lock | rejectattr('state', 'eq', 'locked') | list | count }}", "1"},
		{"{{ area_name('light.kitchen_ceiling') }} {{ area_id('Kitchen') }} {{ 'light.kitchen_island' in area_entities('kitchen') }}", "Kitchen kitchen True"},
		{"{{ floor_name('kitchen') }} {{ floor_areas('outside') }}", "Ground floor ['garage', 'garden']"},
		{"{{ now().year }} {{ now().hour }} {{ utcnow().hour }}", "2026 12 10"},
		{"{{ now().isoformat() }}", "2026-05-06T12:30:00+02:00"},
		{"{{ now().strftime('%Y-%m-%d %H:%M') }}", "2026-05-06 12:30"},
		{"{{ (now() - timedelta(hours=2)).hour }}", "10"},
		{"{{ timedelta(days=1, hours=2) }}", "1 day, 2:00:00"},
		{"{{ as_timestamp('2026-01-01T00:00:00+00:00') }}", "1767225600.0"},
		{"{{ 1767225600 | timestamp_custom('%Y-%m-%d %H:%M', false) }}", "2026-01-01 00:00"},
		{"{{ as_datetime('2026-01-01T00:00:00+00:00').year }}", "2026"},
		{"{{ '%s is %.1f'|format('temp', 21.456) }}", "temp is 21.5"},
		{"{{ 'hello world'.split(' ')[1] | upper }}", "WORLD"},
		{"{{ 'abcdef'[1:3] }} {{ [1,2,3][-1] }}", "bc 3"},
		{"{{ 'sensor.x' is match('sensor\\\\.') }} {{ 'abc' | regex_replace('b', 'X') }}", "True aXc"},
		{"{{ iif(is_state('lock.front_door', 'locked'), 'safe', 'open') }}", "safe"},
		{"{{ expand('light.kitchen_ceiling', 'lock.front_door') | map(attribute='state') | list }}", "['on', 'locked']"},
		{"{{ [1, 2, 3] | sum }} {{ [4, 9] | max }} {{ [4, 9] | min }}", "6 9 4"},
		{"{{ {'a': {'b': 3}} | tojson }}", `{"a":{"b":3}}`},
		{"{{ ('{\"x\": [1, 2]}' | from_json).x | length }}", "2"},
		{"{# comment #}a  {{- ' b ' -}}  c", "a b c"},
		{"{% raw %}{{ not rendered }}{% endraw %}", "{{ not rendered }}"},
		{"{{ states('light.kitchen_ceiling') if true else 'no' }}", "on"},
		{"{{ x }} {{ y.z }}", "1 two"},
		// From HA's template documentation (home-assistant.io/docs/templating, /template-functions).
		{"{{ float('21.5') }} {{ float('abc', 0) }} {{ 'abc' | int(7) }}", "21.5 0 7"},
		{"{% if states('sensor.test_value') | float(0) > 3 %}high{% else %}low{% endif %}", "high"},
		{"{{ states.sensor.test_value.attributes.unit_of_measurement }}", "W"},
		{"{{ states.light | selectattr('state', 'eq', 'on') | map(attribute='entity_id') | list | count > 0 }}", "True"},
		{"{% for state in states.lock %}{{ state.entity_id }}={{ state.state }}, {% endfor %}", "lock.back_door=unlocked, lock.front_door=locked, "},
		{"{{ area_entities('Kitchen') | select('match', 'light\\\\.') | list | count > 0 }}", "True"},
		{"{{ expand('lock.front_door') | map(attribute='state') | list }}", "['locked']"},
		{"{{ x is defined }} {{ nope is defined }} {{ nope is undefined }} {{ none is none }} {{ x is not defined }}", "True False True True False"},
		{"{{ 1 not in [1] }} {{ not false }} {{ -x }} {{ +x }}", "False True -1 1"},
		{"{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Kitchen') }} {{ greet('Hall', greeting='Hi') }}", "Hello, Kitchen! Hi, Hall!"},
		{"{% for i in range(10) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 4 %}{% break %}{% endif %}{{ i }}{% endfor %}", "023"},
		{"{% for i in range(4) %}{{ loop.cycle('odd', 'even') }}{% if loop.changed(i > 1) %}!{% endif %}{% endfor %}", "odd!evenodd!even"},
		{"{% with t = states('sensor.test_value') | float(0) %}{{ t | round(1) }}{% endwith %}", "3.1"},
		{"{% set greeting %}Hi {{ y.z }}{% endset %}{{ greeting }}", "Hi two"},
		{"{% set v = 1 if is_state('lock.front_door', 'locked') else 2 %}{{ v }}", "1"},
		{"{{ 'Hello %s' % y.z }} {{ '%s=%.1f' % ('t', 21.46) }}", "Hello two t=21.5"},
		{"{% set v = 1 if none else 2 %}{{ v }} {% set v = 1 if [0] else 2 %}{{ v }}", "2 1"},
		{"{% set ns = namespace(a=1) %}{% set ns['a'] = ns.a + x %}{{ ns.a }}", "2"},
		{"{% with x = 5, q = x %}{{ x }}{{ q }}{% endwith %}{{ x }}", "511"},
		{"{% with a = 1 %}{% set a = 2 %}{{ a }}{% endwith %}{{ a }}", "2"},
		{"{% set x %}{{ 'a' ~ 1 }}<b>{% endset %}{{ x }} {{ x | length }}", "a1<b> 5"},
		{"{{ ['x', 'y'][0] }} {{ 'abc'[-1] }} {{ 'abcdef'[2:] }} {{ 'abcdef'[::-2] }} {{ [1, 2, 3, 4][1::2] }} {{ 'abc'[5:1:-1] }}", "x c cdef fdb [2, 4] c"},
	}
	vars := map[string]any{"x": 1, "y": map[string]any{"z": "two"}}
	for _, c := range cases {
		out, _, err := RenderTemplate(c.src, vars, snap)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if out != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.src, out, c.want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	snap := testSnapshot(t)
	cases := []struct{ src, kind, msg string }{
		{"{{ 1 + }}", "TemplateSyntaxError", "Expected an expression, got 'end of print statement'"},
		{"{% if true %}x", "TemplateSyntaxError", "Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'"},
		{"{% endif %}", "TemplateSyntaxError", "Encountered unknown tag 'endif'."},
		{"{% include 'secrets.yaml' %}", "TemplateSyntaxError", "Encountered unknown tag 'include'."},
		{"{% import 'x' as y %}", "TemplateSyntaxError", "Encountered unknown tag 'import'."},
		{"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "RecursionError", "maximum recursion depth exceeded"},
		{"{{ 1 | float | nosuchfilter }}", "TemplateAssertionError", "No filter named 'nosuchfilter'."},
		{"{{ x.y(1) }}", "UndefinedError", "'x' is undefined"},
		{"{% for s in 5 %}{% endfor %}", "TypeError", "'int' object is not iterable"},
		{"{% for i in range(30) %}{{ 'x' * 40000 }}{% endfor %}", "TemplateError", "rendered template is too large"},
		{"{{ [1, 2][::0] }}", "ValueError", "slice step cannot be zero"},
		{"{{ 5[1:] }}", "TypeError", "'int' object is not subscriptable"},
		{"{{ x | nosuchfilter }}", "TemplateAssertionError", "No filter named 'nosuchfilter'."},
		{"{% set v = 1|nofa if 2|nofb else 3|nofc %}", "TemplateAssertionError", "No filter named 'nofa'."},
		{"{% set v = 1 if 2|nofb else 3|nofc %}", "TemplateAssertionError", "No filter named 'nofb'."},
		{"{% if a|nof1 %}{{ b|nof2 }}{% elif c|nof3 %}{% endif %}", "TemplateAssertionError", "No filter named 'nof1'."},
		{"{% for v in [1|nofa] if v|nofb %}{{ v|nofc }}{% endfor %}", "TemplateAssertionError", "No filter named 'nofa'."},
		{"{% with a = 1, b = 2|nofb %}{% endwith %}", "TemplateAssertionError", "No filter named 'nofb'."},
		{"{% macro m(a=1|nofa) %}{{ a|nofb }}{% endmacro %}", "TemplateAssertionError", "No filter named 'nofa'."},
		{"{% set v = 'a' + 1 %}", "TypeError", `can only concatenate str (not "int") to str`},
		{"{% with a = 1 / 0 %}{% endwith %}", "ZeroDivisionError", "division by zero"},
		{"{% set 1 = 2 %}", "TemplateSyntaxError", `Unable to parse controlStructure "set": unexpected set target 1`},
		{"{% set v = 1 if x %}", "TemplateSyntaxError", "Malformed 'set' if else condition"},
		{"{% set v %}", "TemplateSyntaxError", "Jinja was looking for the following tags: 'endset'."},
		{"{% with a %}{% endwith %}", "TemplateSyntaxError", `Unable to parse controlStructure "with": Expected '='.`},
		{"{% set v.y = 1 %}", "TemplateError", `Unable to set value on "y"`},
		{"{{ x is nosuchtest }}", "TemplateAssertionError", "No test named 'nosuchtest'."},
		{"{{ 'a' @ 1 }}", "TemplateSyntaxError", ""}, // gonja's lexer drops the '@' and words it differently
		{"{{ 'unterminated }}", "TemplateSyntaxError", ""},
		{"{{ foo.bar }}", "UndefinedError", "'foo' is undefined"},
		{"{{ states.light.nope.state.x }}", "UndefinedError", "'None' has no attribute 'state'"},
		{"{{ 'abc' | float }}", "ValueError", "Template error: float got invalid input 'abc' when rendering template"},
		{"{{ 1 / 0 }}", "ZeroDivisionError", "division by zero"},
		{"{{ 'a' + 1 }}", "TypeError", `can only concatenate str (not "int") to str`},
		{"{{ 'a' < 1 }}", "TypeError", "'<' not supported between instances of 'str' and 'int'"},
		{"{{ range(1000000) | list }}", "OverflowError", "Range too big"},
		{"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "TemplateError", "too complex"},
		{"{{ 'x' * 10000000 }}", "TemplateError", "too large"},
		{strings.Repeat("(", 500) + "1" + strings.Repeat(")", 500), "", ""},
		{"{{ " + strings.Repeat("(", 500) + "1" + strings.Repeat(")", 500) + " }}", "TemplateSyntaxError", "nested too deeply"},
	}
	for _, c := range cases {
		_, _, err := RenderTemplate(c.src, nil, snap)
		if c.kind == "" {
			if err != nil {
				t.Errorf("%.40s: unexpected error %v", c.src, err)
			}
			continue
		}
		te, ok := err.(*TemplateError)
		if !ok {
			t.Errorf("%.60s: want %s, got %v", c.src, c.kind, err)
			continue
		}
		if te.Kind != c.kind || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("%.60s: got %s: %s; want %s containing %q", c.src, te.Kind, te.Msg, c.kind, c.msg)
		}
	}
}

func TestTemplateListeners(t *testing.T) {
	t.Parallel()
	snap := testSnapshot(t)
	cases := []struct {
		src               string
		all, time         bool
		domains, entities string
	}{
		{"{{ states('light.hallway') }}", false, false, "", "light.hallway"},
		{"{% for s in states.lock %}{{ s.state }}{% endfor %}", false, false, "lock", "lock.back_door,lock.front_door"},
		{"{{ states | count }}", true, false, "", ""},
		{"{{ now() }}", false, true, "", ""},
	}
	for _, c := range cases {
		_, l, err := RenderTemplate(c.src, nil, snap)
		if err != nil {
			t.Fatal(err)
		}
		if l.All != c.all || l.Time != c.time || strings.Join(l.Domains, ",") != c.domains || strings.Join(l.Entities, ",") != c.entities {
			t.Errorf("%s: %+v", c.src, l)
		}
	}
}

func TestParseResult(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want any
	}{
		{"42", int64(42)}, {"-3.5", -3.5}, {"True", true}, {"None", nil}, {"[1, 'a']", []any{int64(1), "a"}},
		{"{'a': 1}", map[string]any{"a": int64(1)}}, {"01", "01"}, {"1e3", "1e3"}, {"on", "on"}, {"'quoted'", "'quoted'"},
		{"true", "true"}, {" 5", " 5"}, {"[1, 2", "[1, 2"}, {"5-", "5-"}, {"", ""},
	}
	for _, c := range cases {
		got := ParseResult(c.in)
		if !pyEqual(got, c.want) || typeName(got) != typeName(c.want) {
			t.Errorf("ParseResult(%q) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

// Compiled templates are shared between renders (as HA shares its
// compiled Template objects); concurrent renders must not see each other.
func TestTemplateConcurrentRenders(t *testing.T) {
	t.Parallel()
	snap := testSnapshot(t)
	src := "{% set ns = namespace(n=0) %}{% for s in states.lock %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}{% macro m(v) %}<{{ v }}>{% endmacro %}{{ m(x) }}"
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 20 {
				out, _, err := RenderTemplate(src, map[string]any{"x": g}, snap)
				if want := fmt.Sprintf("%d<%d>", 2*g, g); err != nil || out != want {
					t.Errorf("goroutine %d: %q, %v; want %q", g, out, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func FuzzTemplate(f *testing.F) {
	snap := testSnapshot(f)
	for _, s := range []string{"{{ states('light.hallway') }}", "{% for s in states.light %}{{ s.name }}{% endfor %}", "{{ 1 + 2 * 3 ** 2 }}",
		"{% if x %}{{ x | float(0) | round(1) }}{% endif %}", "{{ 'a'[1:] ~ [1,2][0] }}", "{% set ns = namespace(a=1) %}{% set ns.a = 2 %}{{ ns.a }}",
		"{{ now() - timedelta(days=1) }}", "{{ states.lock | selectattr('state','eq','locked') | list }}", "{% raw %}{{{% endraw %}", "{{ '%s'|format(1) }}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out, _, err := RenderTemplate(src, map[string]any{"x": "1.5"}, snap)
		if err != nil {
			if _, ok := err.(*TemplateError); !ok {
				t.Fatalf("%q: error of type %T: %v", src, err, err)
			}
			return
		}
		if len(out) > maxOutput {
			t.Fatalf("%q: output of %d bytes exceeds the cap", src, len(out))
		}
		_ = ParseResult(out)
	})
}

func FuzzParseResult(f *testing.F) {
	for _, s := range []string{"1", "[1, {'a': (2, 3)}]", "-0.5", "None", "'x' 'y'", "{1: 2}", "[[[[", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := ParseResult(s)
		if _, err := marshal(toGo(v)); err != nil {
			t.Fatalf("%q parsed to a value JSON cannot encode: %#v", s, v)
		}
	})
}

func BenchmarkRenderTemplate(b *testing.B) {
	snap := testSnapshot(b)
	src := "{% for s in states.light | selectattr('state','eq','on') %}{{ s.name }}: {{ s.attributes.brightness | default(0) }}{% endfor %} {{ states('sensor.test_value') | float | round(1) }}"
	for b.Loop() {
		if _, _, err := RenderTemplate(src, nil, snap); err != nil {
			b.Fatal(err)
		}
	}
}
