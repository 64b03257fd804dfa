package tplguard

import (
	"errors"
	"strings"
	"testing"
)

// templatesThatPass are templates people write (most from HA's templating docs and forum
// answers): the guard must let every one through.
var templatesThatPass = []string{
	`{{ states('sensor.temperature') }}`,
	`{{ states.sensor.temperature.state }}`,
	`{{ is_state('device_tracker.paulus', 'home') }}`,
	`{{ state_attr('sun.sun', 'elevation') | float > 10 }}`,
	`{% for state in states.sensor %}{{ state.entity_id }}={{ state.state }}, {% endfor %}`,
	`{{ states.light | selectattr('state', 'eq', 'on') | map(attribute='entity_id') | list }}`,
	`{{ states.light | selectattr('state','eq','on') | list | count }}`,
	`{% set ns = namespace(total=0) %}{% for s in states.sensor if s.attributes.unit_of_measurement == 'W' %}{% set ns.total = ns.total + s.state | float(0) %}{% endfor %}{{ ns.total }}`,
	`{{ expand('group.all_lights') | selectattr('state', 'eq', 'on') | map(attribute='name') | join(', ') }}`,
	`{{ area_entities('kitchen') | select('match', 'light.') | list }}`,
	`{% for area in areas() %}{{ area_name(area) }}: {% for e in area_entities(area) %}{{ e }} {% endfor %}{% endfor %}`,
	`{{ (states('sensor.power') | float * 1000) | round(1) }}`,
	`{{ now().strftime('%H:%M') }}`,
	`{{ as_timestamp(now()) - as_timestamp(states.sensor.x.last_changed) > 300 }}`,
	`{{ relative_time(states.sensor.uptime.last_changed) }}`,
	`{% if is_state('sun.sun', 'above_horizon') %}day{% else %}night{% endif %}`,
	`{{ '%.1f' | format(states('sensor.t') | float) }}`,
	`{{ '%02d:%02d' % (now().hour, now().minute) }}`,
	`{% macro greet(name) %}Hello {{ name }}{% endmacro %}{{ greet('Paulus') }}`,
	`{% set lights = states.light | selectattr('state', 'eq', 'on') | list %}{{ lights | length }} lights on`,
	`{{ (state_attr('light.kitchen', 'brightness') | int(0) / 255 * 100) | round }}`,
	`{{ state_attr('light.kitchen', 'brightness') * 100 / 255 }}`,
	`{% for i in range(5) %}{{ i }}{% endfor %}`,
	`{% for i in range(1, 24, 2) %}{{ i * 60 }} {% endfor %}`,
	`{{ '-' * 20 }}`,
	`{{ states | count }}`,
	`{{ label_entities('outdoor') | list }}`,
	`{{ device_attr(device_id('light.kitchen'), 'name') }}`,
	`{% raw %}{{ not rendered }} {% for %}{% endraw %}{{ 1 }}`,
	`{# a comment with {{ braces }} #}{{ states('sun.sun') }}`,
	`{{ x ** 2 + y ** 0.5 }}`,
	`{{ iif(is_state('binary_sensor.door', 'on'), 'open', 'closed') }}`,
	`{{ states.sensor | rejectattr('state', 'in', ['unavailable', 'unknown']) | map(attribute='name') | sort | join('\n') }}`,
	`{% set t = states('sensor.temp') | float(0) %}{% if t > 25 %}hot{% elif t < 10 %}cold{% else %}ok{% endif %}`,
	`{{ today_at('07:00') < now() }}`,
	`{{ states('input_number.target') | int(0) + 2 }}`,
	`{{ {'on': 'An', 'off': 'Aus'}[states('light.x')] | default('?') }}`,
	`{{ ((now() - states.binary_sensor.door.last_changed).total_seconds() / 60) | round(0) }}`,
	`{{ value_json.temperature | float * 1.8 + 32 }}`,
	"{%- for s in states.binary_sensor | selectattr('attributes.device_class', 'defined') | selectattr('attributes.device_class', 'eq', 'door') -%}\n  {{ s.name }}{{ ', ' if not loop.last }}\n{%- endfor %}",
	`{% for a in areas() %}{% for d in area_devices(a) %}{% for e in device_entities(d) %}{{ e }}{% endfor %}{% endfor %}{% endfor %}`,
	`{% for s in states.light %}{{ loop.index * 1000 }}{% endfor %}`,
	`{% macro double(x, returns) %}{% do returns(x * 2) %}{% endmacro %}{% set fn = double | as_function %}{{ fn(3) }}`,
	`{{ [1, 2, 3] | map('multiply', 2) | list }}`,
	`{{ 3600 * 24 * 365 }}`,
	`{{ 'on' if is_state('light.a', 'on') else 'off' }}`,
	`{{ floor_areas('ground') }} {{ integration_entities('hue') }}`,
	`{{ now() + timedelta(hours=2) }}`,
	`{{ states('sensor.x') is number }} {{ 10 is divisibleby 5 }} {{ x is not none }}`,
	`{% set ns = namespace(items=[]) %}{% for s in states.light %}{% set ns.items = ns.items + [s.name] %}{% endfor %}{{ ns.items }}`,
	`{{ "%-10s|" % "x" }}`,
	`{% for i in range(100) %}{% for j in range(100) %}{{ i * j }}{% endfor %}{% endfor %}`,
	`{% set n = states('input_number.count') | int(0) %}{% for i in range(n) %}{{ i }}{% endfor %}`,
	"{% set sensors = states.sensor\n  | selectattr('attributes.device_class', 'eq', 'temperature')\n  | map(attribute='state') | map('float', 0) | list %}\n{{ (sensors | sum / sensors | count) | round(1) if sensors else 0 }}",
	`{% macro row(s) %}{{ s.name }}: {{ s.state }}{% endmacro %}{% for s in states.climate %}{{ row(s) }}{% endfor %}`,
	`{% with x = 5 %}{{ x + 1 }}{% endwith %}`,
	`{% set x %}{{ states('sun.sun') }}{% endset %}{{ x | upper }}`,
	`{% filter upper %}hello{% endfilter %}`,
	`{{ 0x1F + 1_000 + 1e3 + 0.5 if false else 0 }}`,
	`{{ [1, 2][0] }} {{ 'abc'[1:] }} {{ (1, 2) }} {{ x | default(none) }}`,
	`{{ 'a' ~ 'b' ~ states('sun.sun') }}`,
	`{{ state_attr('climate.living', 'hvac_modes') | join(', ') }}`,
	`{% for s in states.sensor | sort(attribute='last_changed', reverse=true) %}{% if loop.index <= 5 %}{{ s.name }}{% endif %}{% if loop.index > 5 %}{% break %}{% endif %}{% endfor %}`,
	`{{ 'hello {}'.format('world') }} {{ 'x'.ljust(10) }} {{ 'x' | center(40) }}`,
	`{{ 1 + 2 }}`,
	`{{ area_name('light.kitchen_ceiling') }}`,
	`plain text without any template`,
}

// templatesRefused are templates whose work a model could make unbounded, with a word of the
// refusal each must give.
var templatesRefused = []struct{ name, tpl, says string }{
	{"range of a billion", `{% for i in range(10**9) %}x{% endfor %}`, "range()"},
	{"range over the limit", `{% for i in range(100000) %}x{% endfor %}`, "range()"},
	{"range in an expression", `{{ range(50000) | list | count }}`, "range()"},
	{"nested constant ranges multiply", `{% for a in range(100) %}{% for b in range(100) %}{% for c in range(100) %}{% endfor %}{% endfor %}{% endfor %}`, "iterations"},
	{"range of 10000 inside a loop over states", `{% for s in states %}{% for i in range(10000) %}{% endfor %}{% endfor %}`, "iterations"},
	{"four loops deep", `{% for a in states %}{% for b in states %}{% for c in states %}{% for d in states %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}`, "nest at most 3"},
	{"computed ranges nested", `{% for i in range(n) %}{% for j in range(n) %}{% endfor %}{% endfor %}`, "range()"},
	{"computed range inside a loop", `{% for s in states %}{% for i in range(states('input_number.n')|int) %}{% endfor %}{% endfor %}`, "range()"},
	{"computed range around a loop", `{% for i in range(n) %}{% for s in states %}{% endfor %}{% endfor %}`, "range()"},
	{"computed range, listed, around a loop", `{% for i in range(n) | list %}{% for s in states %}{% endfor %}{% endfor %}`, "range()"},
	{"string times a billion", `{{ 'x' * 10**9 }}`, "repeats"},
	{"list times a million", `{{ [0] * 1000000 }}`, "repeats"},
	{"repeat of a repeat", `{{ ('x' * 9999) * 9999 }}`, "repeats"},
	{"repeat through a variable", `{% set s = 'x' * 9999 %}{% set n = 9999 %}{{ s * n }}`, "repeats"},
	{"state times a million", `{{ states('sun.sun') * 1000000 }}`, "multiplies"},
	{"repeat a computed number of times", `{{ 'x' * (states('input_number.n') | int) }}`, "repeats"},
	{"repeat from a string constant", `{{ 'x' * ('99999999' | int) }}`, "repeats"},
	{"neither side a number", `{{ a * b }}`, "without a number"},
	{"power tower", `{{ 10 ** 10 ** 9 }}`, "64 bits"},
	{"computed exponent", `{{ 2 ** n }}`, "power"},
	{"power of a power", `{{ (x ** 64) ** 64 }}`, "power to a power"},
	{"big constant", `{{ 99999999999999999999 }}`, "64 bits"},
	{"constant overflow", `{{ 4294967296 * 4294967296 * 4294967296 }}`, "64 bits"},
	{"macro calls itself", `{% macro f(n) %}{{ f(n) }}{{ f(n) }}{% endmacro %}{{ f(1) }}`, "calls the macro"},
	{"macros in a ring", `{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{{ a() }}{% endmacro %}{{ a() }}`, "calls the macro"},
	{"macro handed itself", `{% macro a(f) %}{{ f(f) }}{% endmacro %}{{ a(a) }}`, "as a value"},
	{"macro through apply", `{% macro a(f) %}{{ f | apply(f) }}{% endmacro %}{{ a | apply(a) }}`, "as a value"},
	{"macro alias set after use", `{% macro a() %}{{ g() }}{{ g() }}{% endmacro %}{% set g = a | as_function %}{{ a() }}`, "calls the macro"},
	{"macro in a namespace", `{% macro a() %}1{% endmacro %}{% set ns = namespace(f=a) %}{{ ns.f() }}`, "as a value"},
	{"macro on an attribute", `{% macro a() %}1{% endmacro %}{% set ns = namespace() %}{% set ns.f = a %}`, "as a value"},
	{"macro through a call block", `{% macro a() %}{{ caller() }}{% endmacro %}{% macro b() %}{% call a() %}{{ b() }}{% endcall %}{% endmacro %}{{ b() }}`, "calls the macro"},
	{"macro loops nest too deep", `{% macro m() %}{% for a in states %}{% for b in states %}{% endfor %}{% endfor %}{% endmacro %}{% for x in states %}{% for y in states %}{{ m() }}{% endfor %}{% endfor %}`, "nest at most 3"},
	{"macro ranges multiply", `{% macro r() %}{% for i in range(1000) %}{% endfor %}{% endmacro %}{% for i in range(100) %}{{ r() }}{% endfor %}`, "iterations"},
	{"recursive loop", `{% for x in [1] recursive %}{{ loop([1, 1]) }}{% endfor %}`, "recursive loop"},
	{"namespace doubles", `{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}`, "doubles"},
	{"namespace repeats", `{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s * 2 %}{% endfor %}`, "doubles"},
	{"namespace doubles through a variable", `{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set t = ns.s %}{% set ns.s = t ~ t %}{% endfor %}`, "doubles"},
	{"list doubles", `{% set ns = namespace(l=[1]) %}{% for s in states %}{% set ns.l = ns.l + ns.l %}{% endfor %}`, "doubles"},
	{"percent width", `{{ '%0999999999d' % 1 }}`, "width"},
	{"percent star width", `{{ '%*d' % (999999999, 1) }}`, "width"},
	{"format width", `{{ '{:>999999999}'.format('x') }}`, "width"},
	{"format filter width", `{{ '%999999999s' | format('x') }}`, "width"},
	{"center", `{{ 'x' | center(1000000000) }}`, "width"},
	{"ljust computed", `{{ 'x'.ljust(10**9) }}`, "width"},
	{"indent computed", `{{ 'x' | indent(n) }}`, "width"},
	{"replace the empty string", `{{ 'abc' | replace('', 'x' * 9999) }}`, "empty string"},
	{"too long", strings.Repeat("{{ 1 }}", 10000), "KiB"},
	{"deep brackets", "{{ " + strings.Repeat("(", 40) + "1" + strings.Repeat(")", 40) + " }}", "deep"},
	{"deep unary", "{{ " + strings.Repeat("-", 40) + "1 }}", "deep"},
	{"deep conditionals", "{{ " + strings.Repeat("1 if x else ", 40) + "1 }}", "deep"},
	{"unclosed loop", `{% for s in states %}x`, "endfor"},
	{"unknown tag", `{% python %}import os{% endpython %}`, "do not have"},
	{"unclosed tag", `{{ states('sun.sun')`, "never closed"},
}

func TestCheckTemplatePasses(t *testing.T) {
	for _, tpl := range templatesThatPass {
		if err := Check(tpl); err != nil {
			t.Errorf("%s\nrefused: %v", tpl, err)
		}
	}
}

func TestCheckTemplateRefuses(t *testing.T) {
	for _, c := range templatesRefused {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.tpl)
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("not refused: %.200s (err %v)", c.tpl, err)
			}
			if !strings.Contains(te.Msg, c.says) {
				t.Errorf("refused with %q, want a message containing %q", te.Msg, c.says)
			}
		})
	}
}

// TestCheckTemplateWorkIsLinear: the guard's own steps stay within a constant per byte, on
// inputs built to make a careless checker quadratic.
func TestCheckTemplateWorkIsLinear(t *testing.T) {
	for _, src := range []string{
		strings.Repeat("{% macro m%d() %}{% endmacro %}", 500),
		strings.Repeat("{{ a.b.c.d.e.f }}", 3000),
		strings.Repeat("{% set ns.x = ns.y + ns.z %}", 1000),
		"{% for s in states %}" + strings.Repeat("{% set ns.a = ns.b + ns.c + ns.d %}", 1500) + "{% endfor %}",
		"{{ '" + strings.Repeat("%5d{:5}", 5000) + "' % x }}",
		strings.Repeat("{", 60000),
	} {
		g := &tplGuard{src: src, vars: map[string]tplInfo{}, macros: map[string]bool{}}
		_ = g.run()
		if g.steps > 64*len(src)+1000 {
			t.Errorf("%d steps for %d bytes (%.40q...)", g.steps, len(src), src)
		}
	}
}

func FuzzCheckTemplate(f *testing.F) {
	for _, s := range templatesThatPass {
		f.Add(s)
	}
	for _, c := range templatesRefused {
		if len(c.tpl) < 2000 {
			f.Add(c.tpl)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		g := &tplGuard{src: src, vars: map[string]tplInfo{}, macros: map[string]bool{}}
		err := g.run()
		if g.steps > 64*len(src)+1000 {
			t.Fatalf("%d steps for %d bytes", g.steps, len(src))
		}
		if err := Check(src); err != nil {
			var te *Error
			if !errors.As(err, &te) || te.Msg == "" {
				t.Fatalf("refusal without a message: %v", err)
			}
		}
		_ = err
	})
}
