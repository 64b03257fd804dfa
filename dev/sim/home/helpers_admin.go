package home

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"
)

// Helpers made in the UI (Settings → Devices & services → Helpers) are storage collections
// (homeassistant/helpers/collection.py, DictStorageCollection + StorageCollectionWebsocket): one per
// domain, each item {"id": <slug of the name>, ...its domain's STORAGE_FIELDS}. Creating an item
// adds an entity whose unique id is the item id (entity id from the name), updating replaces the
// whole item (the domain's schema validates the new data as a whole), deleting removes the entity and
// its registry entry. Helpers from YAML are a separate collection the WebSocket API does not edit.

// HelperDomains are the helper integrations with a storage collection, in HA's order.
var HelperDomains = []string{"input_boolean", "input_button", "input_number", "input_select", "input_text",
	"input_datetime", "counter", "timer", "schedule"}

// helperCollections is one home's collections: domain → items in creation order.
type helperCollections struct {
	items map[string][]map[string]any
}

var (
	helperMu    sync.Mutex
	helperHomes = map[weak.Pointer[Home]]*helperCollections{}
)

// helpers returns the home's collections (h.mu held), seeding them on first use from the helpers
// the demo built as storage helpers (editable: true).
func (h *Home) helpers() *helperCollections {
	key := weak.Make(h)
	helperMu.Lock()
	defer helperMu.Unlock()
	if c, ok := helperHomes[key]; ok {
		return c
	}
	c := &helperCollections{items: map[string][]map[string]any{}}
	ids := slices.Sorted(maps.Keys(h.entities))
	for _, eid := range ids {
		e := h.entities[eid]
		st := h.states[eid]
		if st == nil || !slices.Contains(HelperDomains, e.Platform) || st.Attributes["editable"] != true {
			continue
		}
		c.items[e.Platform] = append(c.items[e.Platform], seedItem(e.Platform, e.UniqueID, st))
	}
	helperHomes[key] = c
	runtime.AddCleanup(h, func(k weak.Pointer[Home]) {
		helperMu.Lock()
		delete(helperHomes, k)
		helperMu.Unlock()
	}, key)
	return c
}

// seedItem is the stored item behind a demo helper, read back from its state.
func seedItem(domain, id string, st *State) map[string]any {
	item := map[string]any{"id": id, "name": st.Name()}
	if icon, ok := st.Attributes["icon"].(string); ok {
		item["icon"] = icon
	}
	keys := map[string][]string{
		"input_number":   {"min", "max", "step", "mode", "unit_of_measurement"},
		"input_select":   {"options"},
		"input_text":     {"min", "max", "pattern", "mode", "unit_of_measurement"},
		"input_datetime": {"has_date", "has_time"},
		"counter":        {"initial", "step", "minimum", "maximum"},
		"timer":          {"duration", "restore"},
	}[domain]
	for _, k := range keys {
		if v, ok := st.Attributes[k]; ok && v != nil {
			item[k] = v
		}
	}
	return item
}

// HelperItems is <domain>/list: the collection's items.
func (h *Home) HelperItems(domain string) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	items := h.helpers().items[domain]
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i] = maps.Clone(it)
	}
	return out
}

// CreateHelper is <domain>/create: validate, store under a fresh id, add the entity.
func (h *Home) CreateHelper(domain string, data map[string]any) (map[string]any, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	valid, err := validateHelper(domain, data)
	if err != nil {
		return nil, err
	}
	c := h.helpers()
	id := freeID(slugify(valid["name"].(string)), func(s string) bool {
		return slices.ContainsFunc(c.items[domain], func(it map[string]any) bool { return it["id"] == s })
	})
	item := map[string]any{"id": id}
	maps.Copy(item, valid)
	c.items[domain] = append(c.items[domain], item)
	eid := domain + "." + freeID(slugify(valid["name"].(string)), func(s string) bool {
		_, taken := h.entities[domain+"."+s]
		_, has := h.states[domain+"."+s]
		return taken || has
	})
	ts := Epoch(h.now())
	h.entities[eid] = &EntityEntry{ID: h.hexID(), EntityID: eid, UniqueID: id, Platform: domain, Labels: []string{}, Aliases: []string{}, CreatedAt: ts, ModifiedAt: ts}
	h.owned[eid] = true
	ctx := h.newContext("", nil)
	h.fireLocked("entity_registry_updated", map[string]any{"action": "create", "entity_id": eid}, "LOCAL", ctx)
	state, attrs := h.helperState(domain, item, nil)
	h.writeState(eid, state, attrs, false, ctx)
	return maps.Clone(item), nil
}

// UpdateHelper is <domain>/update: the new data replaces the item (id kept), and the entity
// follows it.
func (h *Home) UpdateHelper(domain, id string, data map[string]any) (map[string]any, error) {
	h.mu.Lock()
	defer h.flushAfter()()
	c := h.helpers()
	i := slices.IndexFunc(c.items[domain], func(it map[string]any) bool { return it["id"] == id })
	if i < 0 {
		return nil, &NotFoundError{Msg: fmt.Sprintf("Unable to find %s_id %s", domain, id)}
	}
	if _, ok := data["id"]; ok {
		return nil, invalidf("Cannot update ID")
	}
	valid, err := validateHelper(domain, data)
	if err != nil {
		return nil, err
	}
	item := map[string]any{"id": id}
	maps.Copy(item, valid)
	c.items[domain][i] = item
	if eid := h.helperEntity(domain, id); eid != "" {
		state, attrs := h.helperState(domain, item, h.states[eid])
		h.writeState(eid, state, attrs, false, h.newContext("", nil))
	}
	return maps.Clone(item), nil
}

// DeleteHelper is <domain>/delete: the item, its entity and its registry entry go.
func (h *Home) DeleteHelper(domain, id string) error {
	h.mu.Lock()
	defer h.flushAfter()()
	c := h.helpers()
	i := slices.IndexFunc(c.items[domain], func(it map[string]any) bool { return it["id"] == id })
	if i < 0 {
		return &NotFoundError{Msg: fmt.Sprintf("Unable to find %s_id %s", domain, id)}
	}
	c.items[domain] = slices.Delete(c.items[domain], i, i+1)
	if eid := h.helperEntity(domain, id); eid != "" {
		ctx := h.newContext("", nil)
		delete(h.entities, eid)
		delete(h.owned, eid)
		h.fireLocked("entity_registry_updated", map[string]any{"action": "remove", "entity_id": eid}, "LOCAL", ctx)
		h.removeStateLocked(eid, ctx)
	}
	return nil
}

// helperEntity is the entity of a collection item, found as HA does: by platform and unique id.
func (h *Home) helperEntity(domain, id string) string {
	for eid, e := range h.entities {
		if e.Platform == domain && e.UniqueID == id {
			return eid
		}
	}
	return ""
}

// freeID is IDManager.generate_id: the suggestion, else suggestion_2, _3, ...
func freeID(base string, taken func(string) bool) string {
	id := base
	for n := 2; taken(id); n++ {
		id = base + "_" + strconv.Itoa(n)
	}
	return id
}

// hfield is one STORAGE_FIELDS entry.
type hfield struct {
	name string
	req  bool
	kind string // name str icon float int posint intnull bool in options duration blocks
	def  any
	opts []string
}

// dupOptions marks input_select options given twice.
const dupOptions = "\x00duplicate options"

var weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// helperFields are each domain's STORAGE_FIELDS (create and update take the same).
var helperFields = func() map[string][]hfield {
	name, icon := hfield{name: "name", req: true, kind: "name"}, hfield{name: "icon", kind: "icon"}
	f := map[string][]hfield{
		"input_boolean": {name, {name: "initial", kind: "bool"}, icon},
		"input_button":  {name, icon},
		"input_number": {name, {name: "min", req: true, kind: "float"}, {name: "max", req: true, kind: "float"},
			{name: "initial", kind: "float"}, {name: "step", kind: "step", def: 1.0}, icon,
			{name: "unit_of_measurement", kind: "str"}, {name: "mode", kind: "in", def: "slider", opts: []string{"box", "slider"}}},
		"input_select": {name, {name: "options", req: true, kind: "options"}, {name: "initial", kind: "str"}, icon},
		"input_text": {name, {name: "min", kind: "int", def: 0}, {name: "max", kind: "int", def: 100}, {name: "initial", kind: "str"}, icon,
			{name: "unit_of_measurement", kind: "str"}, {name: "pattern", kind: "str"}, {name: "mode", kind: "in", def: "text", opts: []string{"text", "password"}}},
		"input_datetime": {name, {name: "has_date", kind: "bool", def: false}, {name: "has_time", kind: "bool", def: false}, icon, {name: "initial", kind: "str"}},
		"counter": {name, icon, {name: "initial", kind: "posint", def: 0}, {name: "maximum", kind: "intnull", def: nil},
			{name: "minimum", kind: "intnull", def: nil}, {name: "restore", kind: "bool", def: true}, {name: "step", kind: "posint", def: 1}},
		"timer":    {name, icon, {name: "duration", kind: "duration", def: "0:00:00"}, {name: "restore", kind: "bool", def: false}},
		"schedule": {name, icon},
	}
	for _, d := range weekdays {
		f["schedule"] = append(f["schedule"], hfield{name: d, kind: "blocks", def: []any{}})
	}
	return f
}()

// HelperFieldNames lists a domain's fields, for the WebSocket schema.
func HelperFieldNames(domain string) (names []string, required []string) {
	for _, f := range helperFields[domain] {
		names = append(names, f.name)
		if f.req {
			required = append(required, f.name)
		}
	}
	return names, required
}

// validateHelper is the domain's schema: STORAGE_FIELDS (types, defaults, coercion) and then its
// cross-field check, with voluptuous's humanized messages.
func validateHelper(domain string, data map[string]any) (map[string]any, error) {
	fields, ok := helperFields[domain]
	if !ok {
		return nil, invalidf("unknown helper domain %s", domain)
	}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if !slices.ContainsFunc(fields, func(f hfield) bool { return f.name == k }) {
			return nil, invalidf("extra keys not allowed @ data['%s']. Got %s", k, pyValue(data[k]))
		}
	}
	out := map[string]any{}
	for _, f := range fields {
		v, given := data[f.name]
		if !given {
			if f.req {
				return nil, invalidf("required key not provided @ data['%s']. Got None", f.name)
			}
			if f.def != nil || f.kind == "intnull" {
				out[f.name] = f.def
			}
			continue
		}
		cv, msg := coerceField(f, v)
		if msg == dupOptions { // input_select's _unique raises HomeAssistantError, not vol.Invalid
			return nil, &HAError{Msg: "Duplicate options are not allowed"}
		}
		if msg != "" {
			return nil, invalidf("%s for dictionary value @ data['%s']. Got %s", msg, f.name, pyValue(v))
		}
		out[f.name] = cv
	}
	return out, crossCheck(domain, out, data)
}

// coerceField applies one field's validator; msg is voluptuous's text when it fails.
func coerceField(f hfield, v any) (any, string) {
	switch f.kind {
	case "name", "str", "icon", "in":
		s, ok := v.(string)
		if !ok && f.kind == "str" {
			if n, isNum := numberOf(v); isNum { // cv.string takes numbers
				return strconv.FormatFloat(n, 'f', -1, 64), ""
			}
		}
		switch {
		case !ok:
			return nil, "expected str"
		case f.kind == "name" && s == "":
			return nil, "length of value must be at least 1"
		case f.kind == "icon" && !strings.Contains(s, ":"):
			return nil, "Icons should be specified in the form \"prefix:name\""
		case f.kind == "in" && !slices.Contains(f.opts, s):
			return nil, "value must be one of " + pyList(f.opts)
		}
		return s, ""
	case "float", "step":
		n, ok := numberOf(v)
		if !ok {
			return nil, "expected float"
		}
		if f.kind == "step" && n < 1e-9 {
			return nil, "value must be at least 1e-09"
		}
		return n, ""
	case "int", "posint", "intnull":
		if v == nil && f.kind == "intnull" {
			return nil, ""
		}
		n, ok := numberOf(v)
		if !ok {
			return nil, "expected int"
		}
		if f.kind == "posint" && n < 0 {
			return nil, "value must be at least 0"
		}
		return int(math.Trunc(n)), ""
	case "bool":
		b, ok := boolOf(v)
		if !ok {
			return nil, "invalid boolean value " + pyValue(v)
		}
		return b, ""
	case "options":
		list, ok := v.([]any)
		if s, one := v.(string); one { // cv.ensure_list
			list, ok = []any{s}, true
		}
		if !ok || len(list) == 0 {
			return nil, "length of value must be at least 1"
		}
		seen := map[string]bool{}
		for _, o := range list {
			s, ok := o.(string)
			if !ok {
				return nil, "expected str"
			}
			if seen[s] {
				return nil, dupOptions
			}
			seen[s] = true
		}
		return slices.Clone(list), ""
	case "duration":
		d, ok := timerDuration(v)
		if !ok {
			return nil, "offset " + fmt.Sprint(v) + " should be format 'HH:MM', 'HH:MM:SS' or 'HH:MM:SS.F'"
		}
		return formatDuration(d), ""
	case "blocks":
		blocks, msg := scheduleBlocks(v)
		return blocks, msg
	}
	return v, ""
}

// crossCheck is the domain's vol.All validator after the fields (_cv_input_number and friends).
func crossCheck(domain string, cfg, data map[string]any) error {
	whole := func(format string, args ...any) error {
		return invalidf("%s. Got %s", fmt.Sprintf(format, args...), pyValue(data))
	}
	switch domain {
	case "input_number":
		lo, hi := cfg["min"].(float64), cfg["max"].(float64)
		if lo >= hi {
			// sic: HA's message names the values the other way round
			return whole("Maximum (%s) is not greater than minimum (%s)", pyRepr(lo, kFloat), pyRepr(hi, kFloat))
		}
		if init, ok := cfg["initial"].(float64); ok && (init < lo || init > hi) {
			return whole("Initial value %s not in range %s-%s", pyRepr(init, kFloat), pyRepr(lo, kFloat), pyRepr(hi, kFloat))
		}
	case "input_text":
		lo, hi := cfg["min"].(int), cfg["max"].(int)
		if lo > hi {
			return whole("Max len (%d) is not greater than min len (%d)", lo, hi)
		}
		if init, ok := cfg["initial"].(string); ok && (len([]rune(init)) < lo || len([]rune(init)) > hi) {
			return whole("Initial value %s length not in range %d-%d", init, lo, hi)
		}
	case "input_select":
		opts := cfg["options"].([]any)
		if init, ok := cfg["initial"].(string); ok && !slices.Contains(opts, any(init)) {
			names := make([]string, len(opts))
			for i, o := range opts {
				names[i] = o.(string)
			}
			return whole("initial state %s is not part of the options: %s", init, strings.Join(names, ","))
		}
	case "input_datetime":
		if cfg["has_date"] != true && cfg["has_time"] != true {
			return whole("Entity needs at least a date or a time")
		}
	}
	return nil
}

func numberOf(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	case string: // vol.Coerce(float) parses text
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// boolOf is cv.boolean.
func boolOf(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "true", "yes", "on", "enable":
			return true, true
		case "0", "false", "no", "off", "disable":
			return false, true
		}
	case json.Number, float64, int:
		n, _ := numberOf(x)
		return n != 0, true
	}
	return false, false
}

// timerDuration is cv.time_period for a timer: "HH:MM[:SS]", seconds, or {hours, minutes, seconds}.
func timerDuration(v any) (time.Duration, bool) {
	if n, ok := numberOf(v); ok {
		if _, isText := v.(string); !isText {
			return time.Duration(n * float64(time.Second)), true
		}
	}
	switch x := v.(type) {
	case string:
		parts := strings.Split(strings.TrimSpace(x), ":")
		if len(parts) < 2 || len(parts) > 3 {
			return 0, false
		}
		var total float64
		for i, p := range parts {
			n, err := strconv.ParseFloat(p, 64)
			if err != nil || n < 0 {
				return 0, false
			}
			total += n * []float64{3600, 60, 1}[i]
		}
		return time.Duration(total * float64(time.Second)), true
	case map[string]any:
		var total float64
		for k, val := range x {
			unit := map[string]float64{"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1, "milliseconds": 0.001}[k]
			n, ok := numberOf(val)
			if unit == 0 || !ok {
				return 0, false
			}
			total += n * unit
		}
		return time.Duration(total * float64(time.Second)), true
	}
	return 0, false
}

// formatDuration is timer's _format_timedelta: H:MM:SS.
func formatDuration(d time.Duration) string {
	s := int64(d.Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s%3600/60, s%60)
}

// scheduleBlocks validates one weekday of a schedule: [{from, to, data?}], times HH:MM[:SS]
// ("24:00:00" only as an end), sorted, not overlapping (schedule's valid_schedule).
func scheduleBlocks(v any) (any, string) {
	list, ok := v.([]any)
	if !ok {
		return nil, "expected list"
	}
	type block struct {
		from, to int
		m        map[string]any
	}
	var bs []block
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, "expected a dictionary"
		}
		from, okF := clockSeconds(m["from"], false)
		to, okT := clockSeconds(m["to"], true)
		if !okF || !okT {
			return nil, "Invalid time specified: " + fmt.Sprint(m["from"], " ", m["to"])
		}
		if from >= to {
			return nil, fmt.Sprintf("Invalid time range, from %s is after %s", clockText(from), clockText(to))
		}
		out := map[string]any{"from": clockText(from), "to": clockText(to)}
		if d, ok := m["data"].(map[string]any); ok {
			out["data"] = d
		}
		bs = append(bs, block{from, to, out})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].from < bs[j].from })
	out := make([]any, len(bs))
	for i, b := range bs {
		if i > 0 && b.from < bs[i-1].to {
			return nil, "Overlapping times found in schedule"
		}
		out[i] = b.m
	}
	return out, ""
}

func clockSeconds(v any, end bool) (int, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	n := [3]int{}
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return 0, false
		}
		n[i] = x
	}
	total := n[0]*3600 + n[1]*60 + n[2]
	if n[1] > 59 || n[2] > 59 || n[0] > 24 || n[0] == 24 && (!end || total != 86400) {
		return 0, false
	}
	return total, true
}

func clockText(s int) string { return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60) }

// helperState is the entity's state and attributes for an item; old is its state before an update
// (the value is kept where the new settings allow it).
func (h *Home) helperState(domain string, item map[string]any, old *State) (string, map[string]any) {
	attrs := map[string]any{"editable": true, "friendly_name": item["name"]}
	if icon, ok := item["icon"].(string); ok {
		attrs["icon"] = icon
	}
	prev := ""
	if old != nil {
		prev = old.State
	}
	switch domain {
	case "input_boolean":
		state := "off"
		if item["initial"] == true {
			state = "on"
		}
		if old != nil {
			state = prev
		}
		return state, attrs
	case "input_button":
		if old != nil {
			return prev, attrs
		}
		return "unknown", attrs
	case "input_number":
		lo, hi := item["min"].(float64), item["max"].(float64)
		attrs["initial"], attrs["min"], attrs["max"], attrs["step"], attrs["mode"] = item["initial"], lo, hi, item["step"], item["mode"]
		if u, ok := item["unit_of_measurement"]; ok {
			attrs["unit_of_measurement"] = u
		}
		val := lo
		if init, ok := item["initial"].(float64); ok {
			val = init
		}
		if cur, err := strconv.ParseFloat(prev, 64); old != nil && err == nil {
			val = min(max(cur, lo), hi)
		}
		return strconv.FormatFloat(val, 'f', -1, 64) + map[bool]string{true: ".0", false: ""}[val == math.Trunc(val) && math.Abs(val) < 1e15], attrs
	case "input_select":
		opts := item["options"].([]any)
		attrs["options"] = opts
		state, _ := opts[0].(string)
		if init, ok := item["initial"].(string); ok {
			state = init
		}
		if old != nil && slices.Contains(opts, any(prev)) {
			state = prev
		}
		return state, attrs
	case "input_text":
		attrs["min"], attrs["max"], attrs["pattern"], attrs["mode"] = item["min"], item["max"], item["pattern"], item["mode"]
		if u, ok := item["unit_of_measurement"]; ok {
			attrs["unit_of_measurement"] = u
		}
		state := "unknown"
		if init, ok := item["initial"].(string); ok {
			state = init
		}
		if old != nil {
			state = prev
		}
		return state, attrs
	case "input_datetime":
		return h.datetimeState(item, attrs, old)
	case "counter":
		attrs["initial"], attrs["step"] = item["initial"], item["step"]
		for _, k := range []string{"minimum", "maximum"} {
			if item[k] != nil {
				attrs[k] = item[k]
			}
		}
		val := item["initial"].(int)
		if cur, err := strconv.Atoi(prev); old != nil && err == nil {
			val = cur
		}
		if lo, ok := item["minimum"].(int); ok {
			val = max(val, lo)
		}
		if hi, ok := item["maximum"].(int); ok {
			val = min(val, hi)
		}
		return strconv.Itoa(val), attrs
	case "timer":
		attrs["duration"], attrs["restore"] = item["duration"], item["restore"]
		if old != nil && prev != "" {
			return prev, attrs
		}
		return "idle", attrs
	case "schedule":
		state, next := h.scheduleNow(item)
		if next != nil {
			attrs["next_event"] = ISOTime(*next)
		}
		return state, attrs
	}
	return "unknown", attrs
}

// datetimeState is an input_datetime's state: the initial value, else midnight today.
func (h *Home) datetimeState(item, attrs map[string]any, old *State) (string, map[string]any) {
	hasDate, hasTime := item["has_date"] == true, item["has_time"] == true
	attrs["has_date"], attrs["has_time"] = hasDate, hasTime
	now := h.now().In(h.loc)
	t := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, h.loc)
	if init, _ := item["initial"].(string); init != "" {
		if p, err := parseHATime(init, h.loc); err == nil {
			t = p.In(h.loc)
		}
	}
	if old != nil {
		for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02", "15:04:05"} {
			if p, err := time.ParseInLocation(layout, old.State, h.loc); err == nil {
				if layout == "15:04:05" {
					p = time.Date(now.Year(), now.Month(), now.Day(), p.Hour(), p.Minute(), p.Second(), 0, h.loc)
				}
				t = p
				break
			}
		}
	}
	if hasDate {
		attrs["year"], attrs["month"], attrs["day"] = t.Year(), int(t.Month()), t.Day()
	}
	if hasTime {
		attrs["hour"], attrs["minute"], attrs["second"] = t.Hour(), t.Minute(), t.Second()
	}
	switch {
	case hasDate && hasTime:
		attrs["timestamp"] = float64(t.Unix())
		return t.Format("2006-01-02 15:04:05"), attrs
	case hasDate:
		attrs["timestamp"] = float64(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, h.loc).Unix())
		return t.Format("2006-01-02"), attrs
	}
	attrs["timestamp"] = t.Hour()*3600 + t.Minute()*60 + t.Second()
	return t.Format("15:04:05"), attrs
}

// scheduleNow is a schedule's state now (on inside a block) and its next change.
func (h *Home) scheduleNow(item map[string]any) (string, *time.Time) {
	now := h.now().In(h.loc)
	day0 := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, h.loc)
	state := "off"
	var next *time.Time
	for d := 0; d < 8 && next == nil; d++ {
		day := day0.AddDate(0, 0, d)
		wd := weekdays[(int(day.Weekday())+6)%7]
		blocks, _ := item[wd].([]any)
		for _, b := range blocks {
			m, _ := b.(map[string]any)
			from, _ := clockSeconds(m["from"], false)
			to, _ := clockSeconds(m["to"], true)
			start, end := day.Add(time.Duration(from)*time.Second), day.Add(time.Duration(to)*time.Second)
			if d == 0 && !now.Before(start) && now.Before(end) {
				state = "on"
			}
			for _, at := range []time.Time{start, end} {
				if at.After(now) && (next == nil || at.Before(*next)) {
					t := at
					next = &t
				}
			}
		}
	}
	return state, next
}

// pyValue is Python's repr of a JSON value, as humanize_error prints what it got.
func pyValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return "'" + strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), "'", `\'`) + "'"
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, pyValue(k)+": "+pyValue(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
