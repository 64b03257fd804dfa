package hatools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// servicesBudget keeps one page of ha_list_services under about 8 KB of JSON: light.turn_on
// alone has twenty fields.
const servicesBudget = 7500

type listServicesArgs struct {
	Domain string `json:"domain,omitempty" jsonschema:"e.g. light, climate, notify" validate:"omitempty,max=64,printascii"`
	Search string `json:"search,omitempty" jsonschema:"text in a service's name or description (all domains unless domain is set)" validate:"omitempty,max=100"`
	toolkit.Page
}

// serviceView is one service, compact: fields read "name: type, e.g. example" with
// "(required)" first.
type serviceView struct {
	Service       string   `json:"service"`
	Description   string   `json:"description,omitempty"`
	TargetDomains []string `json:"target_domains,omitempty"` // ["any"]: a target of any entity
	Fields        []string `json:"fields,omitempty"`
	Response      string   `json:"response,omitempty"` // "optional" or "required" (return_response)
}

type listServicesResult struct {
	toolkit.List[serviceView]
	Note string `json:"note,omitempty"`
}

func serviceListTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{listServices(d)} }

// listServices is ha_list_services.
func listServices(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listServicesArgs, listServicesResult]{
		Name: "ha_list_services", Toolset: SetStates, Title: "List services",
		Description: "The services (actions) of one domain, or those matching a search, with their fields (required first, " +
			"type, example), target domains and whether they return a response. Use before ha_call_service when unsure of " +
			"a service's name or fields. Pass domain or search; paged (25 a page unless limit says otherwise).",
		ReadOnly: true, Idempotent: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listServicesArgs) (listServicesResult, error) {
			return d.listServices(ctx, a)
		},
	})
}

func (d Deps) listServices(ctx context.Context, a listServicesArgs) (listServicesResult, error) {
	domain := strings.ToLower(strings.TrimSpace(a.Domain))
	search := strings.ToLower(strings.TrimSpace(a.Search))
	if domain == "" && search == "" {
		return listServicesResult{}, toolkit.InvalidArg("domain", "pass a domain or a search", `{"domain": "light"} or {"search": "notify"}`)
	}
	all, err := d.HA.Services(ctx)
	if err != nil {
		return listServicesResult{}, haError(err, false, "try again")
	}
	var views []serviceView
	domains := make([]string, 0, len(all))
	for _, dom := range all {
		domains = append(domains, dom.Domain)
		if domain != "" && dom.Domain != domain {
			continue
		}
		for name, desc := range dom.Services {
			if search != "" && !strings.Contains(strings.ToLower(dom.Domain+"."+name+" "+desc.Name+" "+desc.Description), search) {
				continue
			}
			views = append(views, serviceViewOf(dom.Domain, name, desc))
		}
	}
	if domain != "" && !slices.Contains(domains, domain) {
		sort.Strings(domains)
		return listServicesResult{}, toolkit.NotFound("Home Assistant has no service domain "+domain,
			"domains with services: "+clipList(domains, 80))
	}
	sort.Slice(views, func(i, j int) bool { return views[i].Service < views[j].Service })
	return pageByBudget(views, a.Page), nil
}

// pageByBudget pages like toolkit.Paginate but ends a page early when it would pass the byte
// budget; next_offset then continues where it stopped.
func pageByBudget(views []serviceView, p toolkit.Page) listServicesResult {
	limit, offset := p.Effective()
	if p.Limit == 0 {
		limit = 25
	}
	offset = min(offset, len(views))
	end, size := offset, 0
	for end < len(views) && end-offset < limit {
		b, _ := json.Marshal(views[end])
		if size+len(b) > servicesBudget && end > offset {
			break
		}
		size += len(b) + 1
		end++
	}
	out := listServicesResult{List: toolkit.Window(views[offset:end], len(views), toolkit.Page{Limit: limit, Offset: offset})}
	if out.NextOffset != nil {
		out.Note = fmt.Sprintf("%d more services: call again with offset %d, or narrow with search", len(views)-end, end)
	}
	return out
}

func serviceViewOf(domain, name string, d homeassistant.ServiceDescription) serviceView {
	v := serviceView{Service: domain + "." + name, Description: firstSentence(d.Description)}
	if v.Description == "" {
		v.Description = d.Name
	}
	v.TargetDomains = targetDomains(d.Target)
	if d.Response != nil {
		v.Response = "required"
		if d.Response.Optional {
			v.Response = "optional"
		}
	}
	v.Fields = fieldLines(d.Fields)
	return v
}

// fieldLines flattens the fields (and the collapsible sections services.yaml may group them in)
// into one line each, required ones first.
func fieldLines(fields map[string]json.RawMessage) []string {
	type line struct {
		req  bool
		name string
		text string
	}
	var lines []line
	var walk func(map[string]json.RawMessage)
	walk = func(fs map[string]json.RawMessage) {
		for name, raw := range fs {
			var f struct {
				Required bool                       `json:"required"`
				Example  any                        `json:"example"`
				Selector map[string]json.RawMessage `json:"selector"`
				Fields   map[string]json.RawMessage `json:"fields"` // a section
			}
			if json.Unmarshal(raw, &f) != nil {
				continue
			}
			if f.Selector == nil && f.Fields != nil {
				walk(f.Fields)
				continue
			}
			text := name
			if t := selectorSummary(f.Selector); t != "" {
				text += ": " + t
			}
			if f.Example != nil {
				text += ", e.g. " + clipText(compactJSON(f.Example), 60)
			}
			if f.Required {
				text += " (required)"
			}
			lines = append(lines, line{f.Required, name, text})
		}
	}
	walk(fields)
	sort.Slice(lines, func(i, j int) bool {
		if lines[i].req != lines[j].req {
			return lines[i].req
		}
		return lines[i].name < lines[j].name
	})
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// selectorSummary says what a field takes: the selector's type, with a number's range and unit, a
// select's options or an entity selector's domain.
func selectorSummary(sel map[string]json.RawMessage) string {
	for typ, raw := range sel {
		var o struct {
			Min      *float64 `json:"min"`
			Max      *float64 `json:"max"`
			Unit     string   `json:"unit_of_measurement"`
			Options  []any    `json:"options"`
			Domain   any      `json:"domain"`
			Multiple bool     `json:"multiple"`
		}
		_ = json.Unmarshal(raw, &o)
		s := typ
		switch {
		case o.Min != nil && o.Max != nil:
			s += fmt.Sprintf(" %g–%g", *o.Min, *o.Max)
		case len(o.Options) > 0:
			opts := make([]string, 0, len(o.Options))
			for _, op := range o.Options {
				if m, ok := op.(map[string]any); ok {
					op = m["value"]
				}
				opts = append(opts, fmt.Sprint(op))
			}
			s += " [" + clipList(opts, 12) + "]"
		case o.Domain != nil:
			s += " " + strings.Trim(compactJSON(o.Domain), `"`)
		}
		if o.Unit != "" {
			s += " " + o.Unit
		}
		if o.Multiple {
			s += " (list)"
		}
		return s
	}
	return ""
}

// targetDomains reads target: {entity: [{domain: [...]}]}; a target with no domain filter is "any".
func targetDomains(raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var t struct {
		Entity json.RawMessage `json:"entity"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return []string{"any"}
	}
	var filters []struct {
		Domain any `json:"domain"`
	}
	if json.Unmarshal(t.Entity, &filters) != nil {
		var one struct {
			Domain any `json:"domain"`
		}
		_ = json.Unmarshal(t.Entity, &one)
		filters = append(filters, one)
	}
	var out []string
	for _, f := range filters {
		switch x := f.Domain.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				out = append(out, fmt.Sprint(e))
			}
		}
	}
	if len(out) == 0 {
		return []string{"any"}
	}
	sort.Strings(out)
	return out
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return clipText(s, 160)
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func clipList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(", … (%d more)", len(items)-n)
}
