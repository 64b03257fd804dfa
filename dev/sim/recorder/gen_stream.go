package recorder

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// sample is one generated state change.
type sample struct {
	ts          int64 // last_updated, unix microseconds
	lastChanged int64 // == ts unless only attributes changed
	state       string
	attrs       string // shared_attrs JSON
	value       float64
	numeric     bool
	ctx         []byte
}

// stream produces one entity's history: exactly n samples spread over
// [start, start+span) with per-sample jitter, driven by its own PCG source so
// the output does not depend on how entities interleave.
type stream struct {
	spec   EntitySpec
	idx    int
	domain string
	rng    *rand.Rand
	n, k   int
	start  int64
	span   int64

	prec      int
	value     float64
	phase     float64
	state     string
	changed   int64
	bright    int
	attrCache map[int]string
	cur       sample
}

func newStream(spec EntitySpec, idx int, seed int64, start, span int64, n int) *stream {
	s := &stream{
		spec: spec, idx: idx, domain: domainOf(spec.EntityID),
		rng: rand.New(rand.NewPCG(uint64(seed), uint64(idx)*0x9E3779B97F4A7C15+1)),
		n:   n, start: start, span: span, attrCache: map[int]string{},
	}
	s.prec = precision(spec)
	s.phase = s.rng.Float64() * 2 * math.Pi
	if spec.Kind == "numeric" {
		switch spec.StateClass {
		case "total_increasing", "total":
			s.value = spec.Min
		default:
			s.value = spec.Min + (spec.Max-spec.Min)*(0.3+0.4*s.rng.Float64())
		}
	}
	return s
}

func precision(spec EntitySpec) int {
	switch {
	case spec.DeviceClass == "energy" || spec.Unit == "kWh":
		return 3
	case spec.DeviceClass == "temperature", spec.DeviceClass == "humidity", spec.DeviceClass == "power":
		return 1
	case spec.StateClass == "measurement_angle":
		return 0
	}
	return 2
}

func (s *stream) values() []string {
	if len(s.spec.Values) > 0 {
		return s.spec.Values
	}
	if s.spec.Kind == "static" {
		return []string{"unknown"}
	}
	return []string{"off", "on"}
}

// next advances to the following sample; false when the stream is done.
func (s *stream) next() bool {
	if s.k >= s.n {
		return false
	}
	u := 0.05 + 0.9*s.rng.Float64()
	ts := s.start + int64(float64(s.span)*(float64(s.k)+u)/float64(s.n))
	first := s.k == 0
	s.k++
	var e [10]byte
	for i := range e {
		e[i] = byte(s.rng.Uint32())
	}
	s.cur = sample{ts: ts, ctx: ulidBytes(time.UnixMicro(ts), e)}
	attrOnly := false
	switch s.spec.Kind {
	case "numeric":
		s.state = s.nextNumeric(ts, first)
		s.cur.value, s.cur.numeric = s.value, true
	case "binary":
		vals := s.values()
		switch {
		case first:
			s.state = vals[s.rng.IntN(2)]
		case s.domain == "light" && s.state == "on" && s.rng.Float64() < 0.35:
			attrOnly = true // dimming: attributes change, state does not
		case s.state == vals[0]:
			s.state = vals[1]
		default:
			s.state = vals[0]
		}
		if s.domain == "light" && s.state == "on" {
			s.bright = 25 * (1 + s.rng.IntN(10))
		}
	case "enum":
		vals := s.values()
		if first {
			s.state = vals[s.rng.IntN(len(vals))]
		} else {
			j := s.rng.IntN(len(vals) - 1)
			if vals[j] == s.state {
				j = len(vals) - 1
			}
			s.state = vals[j]
		}
	default: // static
		s.state = s.values()[0]
	}
	if !attrOnly {
		s.changed = ts
	}
	s.cur.state, s.cur.lastChanged, s.cur.attrs = s.state, s.changed, s.attributes()
	return true
}

// nextNumeric moves the value and returns its text, always different from
// the previous text: HA writes no row when neither state nor attributes change.
func (s *stream) nextNumeric(ts int64, first bool) string {
	spec := s.spec
	width := spec.Max - spec.Min
	unit := math.Pow10(-s.prec)
	prevText := s.state
	switch spec.StateClass {
	case "total_increasing", "total":
		if !first {
			step := width / float64(max(s.n, 1)) * 2 * s.rng.Float64()
			s.value += max(step, unit)
		}
	case "measurement_angle":
		s.value = math.Mod(s.value+s.rng.NormFloat64()*25+360, 360)
	default:
		day := float64(24 * time.Hour / time.Microsecond)
		mid := spec.Min + width/2
		target := mid + 0.3*width*math.Sin(2*math.Pi*float64(ts)/day+s.phase)
		s.value += (target-s.value)*0.2 + s.rng.NormFloat64()*0.03*width
		s.value = min(max(s.value, spec.Min), spec.Max)
	}
	text := strconv.FormatFloat(s.value, 'f', s.prec, 64)
	if !first && text == prevText {
		if s.value+unit <= spec.Max || spec.StateClass == "total_increasing" || spec.StateClass == "total" {
			s.value += unit
		} else {
			s.value -= unit
		}
		text = strconv.FormatFloat(s.value, 'f', s.prec, 64)
	}
	s.value, _ = strconv.ParseFloat(text, 64)
	return text
}

// attributes renders (and caches) the entity's attribute JSON for its state.
func (s *stream) attributes() string {
	key := 0
	light := s.domain == "light"
	if light && s.state == "on" {
		key = s.bright
	}
	if j, ok := s.attrCache[key]; ok {
		return j
	}
	spec := s.spec
	a := map[string]any{"friendly_name": friendlyOrDefault(spec)}
	if spec.DeviceClass != "" {
		a["device_class"] = spec.DeviceClass
	}
	if spec.Unit != "" {
		a["unit_of_measurement"] = spec.Unit
	}
	if spec.StateClass != "" {
		a["state_class"] = spec.StateClass
	}
	if spec.Kind == "enum" && spec.DeviceClass == "enum" {
		a["options"] = spec.Values
	}
	if light {
		a["supported_color_modes"] = []string{"brightness"}
		a["brightness"], a["color_mode"] = nil, nil
		if key > 0 {
			a["brightness"], a["color_mode"] = key, "brightness"
		}
	}
	b, _ := compactJSON(a)
	s.attrCache[key] = string(b)
	return string(b)
}

func friendlyOrDefault(spec EntitySpec) string {
	if spec.FriendlyName != "" {
		return spec.FriendlyName
	}
	words := strings.Split(spec.EntityID[strings.IndexByte(spec.EntityID, '.')+1:], "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// defaultEvery is the mean time between changes when a spec leaves it zero.
func defaultEvery(spec EntitySpec) time.Duration {
	if spec.Every > 0 {
		return spec.Every
	}
	switch spec.Kind {
	case "numeric":
		return 5 * time.Minute
	case "binary":
		return 30 * time.Minute
	}
	return time.Hour
}
