package sandbox

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"
)

//go:embed templates/*.tmpl
var templates embed.FS

// file is one generated file, relative to the sandbox root. mode
// fs.ModeDir makes an empty directory.
type file struct {
	path string
	data []byte
	mode fs.FileMode
}

// render produces every file of the sandbox from the options, without
// touching the disk, so it can be checked (and fuzzed) on its own.
func render(o Options) ([]file, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.HAVersion == "" {
		o.HAVersion = DefaultHAVersion
	}
	ents, err := pickEntities(o.Entities)
	if err != nil {
		return nil, err
	}
	repl := ents.replacer()
	tmpl := func(name string) []byte {
		b, err := templates.ReadFile("templates/" + name + ".tmpl")
		if err != nil {
			panic("sandbox: missing embedded template " + name) // a build defect, not input
		}
		return []byte(repl.Replace(string(b)))
	}
	files := []file{
		{"config/configuration.yaml", tmpl("configuration.yaml"), 0o644},
		{"config/secrets.yaml", tmpl("secrets.yaml"), 0o600},
		{"config/automations.yaml", tmpl("automations.yaml"), 0o644},
		{"config/scripts.yaml", tmpl("scripts.yaml"), 0o644},
		{"config/scenes.yaml", tmpl("scenes.yaml"), 0o644},
		{"config/customize.yaml", tmpl("customize.yaml"), 0o644},
		{"config/themes/midnight.yaml", tmpl("midnight_theme.yaml"), 0o644},
		{"config/blueprints/automation/homeassistant/motion_light.yaml", tmpl("motion_light.yaml"), 0o644},
		{"config/custom_components", nil, fs.ModeDir},
		{"config/www", nil, fs.ModeDir},
		{"config/home-assistant.log", homeAssistantLog(o.Now, o.HAVersion, ents, 320), 0o644},
		{"config/home-assistant.log.1", homeAssistantLog(o.Now.Add(-26*time.Hour), o.HAVersion, ents, 120), 0o644},
		{"ssl/fullchain.pem", placeholderPEM("CERTIFICATE"), 0o644},
		{"ssl/privkey.pem", placeholderPEM("PRIVATE KEY"), 0o600},
		{"share/README.txt", []byte("Files in /share are shared between Home Assistant and add-ons.\nThis is hamcp's demo sandbox.\n"), 0o644},
		{"media/snapshots/front_door.png", snapshotPNG(), 0o644},
		{"addons/hello_world/config.yaml", []byte(localAddonManifest), 0o644},
		{"addons/hello_world/Dockerfile", []byte(localAddonDockerfile), 0o644},
		{"addons/hello_world/run.sh", []byte("#!/usr/bin/with-contenv bashio\nbashio::log.info \"Hello world!\"\n"), 0o755},
		{"addon_configs/a0d7b954_nodered/flows.json", []byte("[]\n"), 0o644},
		{"addon_configs/a0d7b954_nodered/settings.js", []byte(noderedSettings), 0o644},
	}
	storage, err := storageFiles(o, ents)
	if err != nil {
		return nil, err
	}
	files = append(files, storage...)
	slug, tarball, err := backupTar(o)
	if err != nil {
		return nil, err
	}
	files = append(files, file{"backup/" + slug + ".tar", tarball, 0o644})
	return files, nil
}

// entities are the ids the templates mention, by role.
type entities struct {
	lights, switches, motions, temps, persons []string
	all                                       []string
}

var fallbacks = map[string]string{
	"light":   "light.kitchen light.living_room",
	"switch":  "switch.coffee_maker",
	"motion":  "binary_sensor.hallway_motion",
	"temp":    "sensor.living_room_temperature sensor.bedroom_temperature",
	"persons": "person.alice",
}

func pickEntities(ids []string) (entities, error) {
	var e entities
	seen := map[string]bool{}
	for i, id := range ids {
		if !validEntityID(id) {
			return e, fmt.Errorf("sandbox: entities[%d]: %q is not an entity id (domain.object_id, lowercase, domain starting with a letter), e.g. light.kitchen", i, id)
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		e.all = append(e.all, id)
		domain, object, _ := strings.Cut(id, ".")
		switch {
		case domain == "light":
			e.lights = append(e.lights, id)
		case domain == "switch":
			e.switches = append(e.switches, id)
		case domain == "binary_sensor" && (strings.Contains(object, "motion") || strings.Contains(object, "occupancy") || strings.Contains(object, "presence")):
			e.motions = append(e.motions, id)
		case domain == "sensor" && strings.Contains(object, "temperature"):
			e.temps = append(e.temps, id)
		case domain == "person":
			e.persons = append(e.persons, id)
		}
	}
	fill := func(list *[]string, key string, n int) {
		for _, f := range strings.Fields(fallbacks[key]) {
			if len(*list) >= n {
				return
			}
			if !seen[f] {
				*list = append(*list, f)
			}
		}
	}
	fill(&e.lights, "light", 2)
	fill(&e.switches, "switch", 1)
	fill(&e.motions, "motion", 1)
	fill(&e.temps, "temp", 1)
	fill(&e.persons, "persons", 1)
	if len(e.lights) < 2 { // a single given light plays both roles
		e.lights = append(e.lights, e.lights[0])
	}
	sort.Strings(e.all)
	return e, nil
}

func (e entities) replacer() *strings.Replacer {
	var temps []string
	for _, t := range e.temps[:min(len(e.temps), 4)] {
		temps = append(temps, "'"+t+"'")
	}
	return strings.NewReplacer(
		"@@LIGHT1@@", e.lights[0], "@@LIGHT2@@", e.lights[1],
		"@@LIGHT1_NAME@@", nameOf(e.lights[0]),
		"@@SWITCH1@@", e.switches[0], "@@MOTION1@@", e.motions[0],
		"@@TEMP1@@", e.temps[0], "@@TEMP1_NAME@@", nameOf(e.temps[0]),
		"@@TEMPS_LIST@@", strings.Join(temps, ", "),
		"@@PERSON1@@", e.persons[0],
	)
}

// nameOf turns light.living_room into "Living Room".
func nameOf(id string) string {
	_, object, _ := strings.Cut(id, ".")
	words := strings.Split(object, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.TrimSpace(strings.Join(words, " "))
}

// validEntityID accepts HA entity ids whose domain starts with a letter, so
// they stay plain strings when written unquoted into YAML.
func validEntityID(id string) bool {
	domain, object, ok := strings.Cut(id, ".")
	if !ok || domain == "" || object == "" || len(id) > 255 || strings.Contains(object, ".") {
		return false
	}
	if domain[0] < 'a' || domain[0] > 'z' || strings.Contains(domain, "__") {
		return false
	}
	for _, part := range []string{domain, object} {
		if part[0] == '_' || part[len(part)-1] == '_' {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return true
}

// placeholderPEM is a PEM block whose body is plain text saying it is a
// demo placeholder; no key material exists anywhere in the sandbox.
func placeholderPEM(kind string) []byte {
	body := "aGFtY3AgZGVtbyBzYW5kYm94OiB0aGlzIGlzIGEgcGxhY2Vob2xkZXIsIG5vdCBh\nIHJlYWwgY2VydGlmaWNhdGUgb3Iga2V5Lg==\n"
	return []byte("# DEMO PLACEHOLDER generated by hamcp's simulated home.\n# Not a real " + strings.ToLower(kind) +
		"; Home Assistant's http integration would fail to load it.\n" +
		"-----BEGIN " + kind + "-----\n" + body + "-----END " + kind + "-----\n")
}

const localAddonManifest = `name: Hello world
version: "1.0.0"
slug: hello_world
description: Minimal local add-on (hamcp demo sandbox)
arch:
  - aarch64
  - amd64
init: false
startup: application
boot: manual
`

const localAddonDockerfile = `ARG BUILD_FROM
FROM $BUILD_FROM
COPY run.sh /
RUN chmod a+x /run.sh
CMD [ "/run.sh" ]
`

const noderedSettings = `module.exports = {
  flowFile: "flows.json",
  credentialSecret: false,
  uiPort: 1880,
  logging: { console: { level: "info", metrics: false, audit: false } },
};
`
