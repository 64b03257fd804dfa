package hatools

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)


type listBlueprintsArgs struct {
	Domain string `json:"domain,omitempty" jsonschema:"automation (default) or script" validate:"omitempty,oneof=automation script"`
	Search string `json:"search,omitempty" jsonschema:"case-insensitive text matched against path, name and description"`
	toolkit.Page
}

type blueprintItem struct {
	Path        string   `json:"path"`
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	Author      string   `json:"author,omitempty"`
	SourceURL   string   `json:"source_url,omitempty"`
	Inputs      []string `json:"inputs,omitempty"`
	Error       string   `json:"error,omitempty"`
}

type importBlueprintArgs struct {
	URL       string `json:"url" jsonschema:"where the blueprint is: a GitHub file, raw GitHub, gist or community forum URL, or any .yaml URL" validate:"required,url" example:"https://github.com/home-assistant/core/blob/dev/homeassistant/components/automation/blueprints/notify_leaving_zone.yaml"`
	Path      string `json:"path,omitempty" jsonschema:"file to save it as under blueprints/<domain>/ (default: HA's suggestion, author/name)"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace a blueprint already saved at that path"`
}

type importedBlueprint struct {
	Domain           string   `json:"domain"`
	Path             string   `json:"path"`
	Name             string   `json:"name"`
	Inputs           []string `json:"inputs,omitempty"`
	Replaced         bool     `json:"replaced,omitempty"`
	ValidationErrors []string `json:"validation_errors,omitempty"`
	Next             string   `json:"next"`
}

// maxBlueprintDescription bounds descriptions in the list; blueprints often carry long ones.
const maxBlueprintDescription = 200

func blueprintTools(d Deps) []*toolkit.Tool {
	list := toolkit.Define(toolkit.Spec[listBlueprintsArgs, toolkit.List[blueprintItem]]{
		Name: "ha_list_blueprints", Toolset: SetAutomations, Title: "List blueprints",
		Description: "List the automation (or script) blueprints saved in Home Assistant: path (what use_blueprint needs), name, description and input names. Paged.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listBlueprintsArgs) (toolkit.List[blueprintItem], error) {
			domain := a.Domain
			if domain == "" {
				domain = "automation"
			}
			var res map[string]struct {
				Metadata map[string]any `json:"metadata"`
				Error    string         `json:"error"`
			}
			if err := d.HA.Call(ctx, "blueprint/list", map[string]any{"domain": domain}, &res); err != nil {
				return toolkit.List[blueprintItem]{}, haWSError(err, "blueprints", false, "")
			}
			search := strings.ToLower(a.Search)
			var items []blueprintItem
			for path, bp := range res {
				it := blueprintItem{Path: path, Error: bp.Error}
				if m := bp.Metadata; m != nil {
					it.Name, it.Description, it.Author, it.SourceURL = stringOf(m["name"]), stringOf(m["description"]), stringOf(m["author"]), stringOf(m["source_url"])
					it.Inputs = inputNames(m["input"])
				}
				if search != "" && !strings.Contains(strings.ToLower(it.Path+" "+it.Name+" "+it.Description), search) {
					continue
				}
				if len(it.Description) > maxBlueprintDescription {
					it.Description = truncateUTF8(it.Description, maxBlueprintDescription) + "…"
				}
				items = append(items, it)
			}
			sort.Slice(items, func(i, j int) bool { return items[i].Path < items[j].Path })
			return toolkit.Paginate(items, a.Page), nil
		},
	})

	imp := toolkit.Define(toolkit.Spec[importBlueprintArgs, importedBlueprint]{
		// A blueprint's actions are invisible to the automation that uses it, so third-party ones (which may
		// call shell_command.*, hassio.* …) come in only with the command grant.
		Name: "ha_import_blueprint", Toolset: SetAutomations, Title: "Import a blueprint", Category: toolkit.Command,
		Description: "Download a blueprint from a URL into Home Assistant (blueprint/import, then save). Returns where it was saved and its inputs; " +
			"then create an automation with use_blueprint: {path, input} via ha_create_automation. Existing files are kept unless overwrite=true. " +
			"Needs the user's command permission: a blueprint is third-party automation logic that can call any service.",
		OpenWorld: true,
		Summary:   func(a importBlueprintArgs) string { return a.URL },
		Handler: func(ctx context.Context, c *toolkit.Call, a importBlueprintArgs) (importedBlueprint, error) {
			if u, err := url.Parse(a.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				return importedBlueprint{}, toolkit.InvalidArg("url", "must be an http(s) URL", "")
			}
			var res struct {
				SuggestedFilename string `json:"suggested_filename"`
				RawData           string `json:"raw_data"`
				Blueprint         struct {
					Metadata map[string]any `json:"metadata"`
				} `json:"blueprint"`
				ValidationErrors []string `json:"validation_errors"`
				Exists           bool     `json:"exists"`
			}
			if err := d.HA.Call(ctx, "blueprint/import", map[string]any{"url": a.URL}, &res); err != nil {
				return importedBlueprint{}, importError(err)
			}
			meta := res.Blueprint.Metadata
			domain := stringOf(meta["domain"])
			path := strings.TrimSuffix(strings.TrimSpace(a.Path), ".yaml")
			if path == "" {
				path = res.SuggestedFilename
			}
			save := map[string]any{"domain": domain, "path": path, "yaml": res.RawData, "source_url": a.URL}
			if a.Overwrite {
				save["allow_override"] = true
			}
			var saved struct {
				OverridesExisting bool `json:"overrides_existing"`
			}
			if err := d.HA.Call(ctx, "blueprint/save", save, &saved); err != nil {
				var api *homeassistant.APIError
				if errors.As(err, &api) && api.Code == "already_exists" {
					no := false
					return importedBlueprint{}, &toolkit.Error{Code: "already_exists", Field: "path", Changed: &no,
						Message: "a blueprint is already saved at " + domain + "/" + path + ".yaml",
						Hint:    "pass overwrite=true to replace it, or another path"}
				}
				return importedBlueprint{}, haWSError(err, "blueprints", false, "")
			}
			return importedBlueprint{Domain: domain, Path: path + ".yaml", Name: stringOf(meta["name"]), Inputs: inputNames(meta["input"]),
				Replaced: saved.OverridesExisting, ValidationErrors: res.ValidationErrors,
				Next: `use it: ha_create_automation {"config": {"alias": "…", "use_blueprint": {"path": "` + path + `.yaml", "input": {…}}}}`}, nil
		},
	})
	return []*toolkit.Tool{list, imp}
}

// inputNames lists a blueprint's inputs, flattening input sections (HA 2024.6+ groups inputs
// in sections that have their own "input" member).
func inputNames(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for name, spec := range m {
		if s, ok := spec.(map[string]any); ok {
			if inner, ok := s["input"].(map[string]any); ok {
				out = append(out, inputNames(inner)...)
				continue
			}
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// importError explains why Home Assistant could not import a URL.
func importError(err error) error {
	var api *homeassistant.APIError
	if errors.As(err, &api) {
		switch {
		case api.Code == "unknown_error":
			return &toolkit.Error{Code: "import_failed", Field: "url", Message: "Home Assistant could not download a blueprint from that URL (" + api.Message + ")",
				Hint: "check that the URL opens in a browser and points at the blueprint's .yaml file"}
		case api.Code == "home_assistant_error" || api.Code == "invalid_format" || api.Code == "not_supported":
			return &toolkit.Error{Code: "import_failed", Field: "url", Message: "Home Assistant refused the blueprint: " + api.Message,
				Hint: "use a GitHub, gist, community forum or direct .yaml URL of an automation or script blueprint"}
		}
	}
	return haWSError(err, "blueprints", false, "")
}
