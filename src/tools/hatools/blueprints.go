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
	Domain string `json:"domain,omitempty" jsonschema:"default automation" validate:"omitempty,oneof=automation script"`
	Search string `json:"search,omitempty"`
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
	URL       string `json:"url" jsonschema:"GitHub, gist, forum or .yaml URL" validate:"required,url" example:"https://github.com/home-assistant/core/blob/dev/homeassistant/components/automation/blueprints/notify_leaving_zone.yaml"`
	Path      string `json:"path,omitempty" jsonschema:"under blueprints/<domain>/ (default author/name)"`
	Overwrite bool   `json:"overwrite,omitempty"`
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

// blueprintTools are the blueprint tools, in the order tools/list shows them.
func blueprintTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{listBlueprints(d), importBlueprint(d)}
}

// listBlueprints is ha_list_blueprints.
func listBlueprints(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listBlueprintsArgs, toolkit.List[blueprintItem]]{
		Name: "ha_list_blueprints", Toolset: SetAutomations, Title: "List blueprints",
		Description: "Saved automation (or script) blueprints: path (for use_blueprint), name, description, inputs. Paged.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listBlueprintsArgs) (toolkit.List[blueprintItem], error) {
			return blueprintList(ctx, d.HA, a)
		},
	})
}

func blueprintList(ctx context.Context, ha *homeassistant.Client, a listBlueprintsArgs) (toolkit.List[blueprintItem], error) {
	domain := a.Domain
	if domain == "" {
		domain = "automation"
	}
	res, err := ha.Blueprints(ctx, domain)
	if err != nil {
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
}

// importBlueprint is ha_import_blueprint.
func importBlueprint(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[importBlueprintArgs, importedBlueprint]{
		// A blueprint's actions are invisible to the automation that uses it, so third-party ones (which may
		// call shell_command.*, hassio.* …) come in only with the command grant.
		Name: "ha_import_blueprint", Toolset: SetAutomations, Title: "Import a blueprint", Category: toolkit.Command,
		Description: "Download a blueprint from a URL into Home Assistant; returns the path and inputs for use_blueprint in ha_create_automation. " +
			"Keeps an existing file unless overwrite=true. Needs the user's command permission: blueprints are third-party logic that can call any service.",
		OpenWorld: true,
		Summary:   func(a importBlueprintArgs) string { return a.URL },
		Handler: func(ctx context.Context, c *toolkit.Call, a importBlueprintArgs) (importedBlueprint, error) {
			return downloadBlueprint(ctx, d.HA, a)
		},
	})
}

// downloadBlueprint has Home Assistant fetch the blueprint, then saves it where asked.
func downloadBlueprint(ctx context.Context, ha *homeassistant.Client, a importBlueprintArgs) (importedBlueprint, error) {
	if u, err := url.Parse(a.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return importedBlueprint{}, toolkit.InvalidArg("url", "must be an http(s) URL", "")
	}
	res, err := ha.ImportBlueprint(ctx, a.URL)
	if err != nil {
		return importedBlueprint{}, importError(err)
	}
	meta := res.Blueprint.Metadata
	domain := stringOf(meta["domain"])
	path := strings.TrimSuffix(strings.TrimSpace(a.Path), ".yaml")
	if path == "" {
		path = res.SuggestedFilename
	}
	replaced, err := ha.SaveBlueprint(ctx, homeassistant.BlueprintSave{Domain: domain, Path: path, YAML: res.RawData, SourceURL: a.URL, AllowOverride: a.Overwrite})
	if err != nil {
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
		Replaced: replaced, ValidationErrors: res.ValidationErrors,
		Next: `use it: ha_create_automation {"config": {"alias": "…", "use_blueprint": {"path": "` + path + `.yaml", "input": {…}}}}`}, nil
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
