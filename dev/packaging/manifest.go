package packaging

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Root is the repository root: the nearest directory above dir holding go.mod.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("packaging: no go.mod above the working directory")
		}
		dir = parent
	}
}

// ReadYAML decodes a YAML file into JSON's data model (map[string]any, []any, float64, string,
// bool, nil), the form JSON-Schema validators and the Supervisor's options.json use.
func ReadYAML(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a mapping", path)
	}
	return JSONModel(m)
}

// JSONModel round-trips v through encoding/json, so numbers are float64 whatever YAML made them.
func JSONModel(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// Manifest is the part of config.yaml the rating and the tests reason about.
type Manifest struct {
	Name, Version, Slug, Description, URL string
	Arch                                  []string
	Init                                  *bool
	HomeassistantAPI                      bool   `json:"homeassistant_api"`
	HassioAPI                             bool   `json:"hassio_api"`
	HassioRole                            string `json:"hassio_role"`
	AuthAPI                               bool   `json:"auth_api"`
	Ingress                               bool
	IngressPort                           *int `json:"ingress_port"`
	Apparmor                              any
	HostNetwork                           bool `json:"host_network"`
	HostPID                               bool `json:"host_pid"`
	HostUTS                               bool `json:"host_uts"`
	DockerAPI                             bool `json:"docker_api"`
	FullAccess                            bool `json:"full_access"`
	KernelModules                         bool `json:"kernel_modules"`
	Privileged                            []string
	Ports                                 map[string]*int
	Map                                   []Mount
	Options                               map[string]any
	Schema                                map[string]any
}

// Mount is one dict-form map entry.
type Mount struct {
	Type     string `json:"type"`
	ReadOnly *bool  `json:"read_only"`
	Path     string `json:"path"`
}

// Writable reports whether the folder is mounted read-write (the Supervisor's default is read-only).
func (m Mount) Writable() bool { return m.ReadOnly != nil && !*m.ReadOnly }

// DecodeManifest reads the fields of Manifest from config.yaml's JSON model.
func DecodeManifest(doc map[string]any) (Manifest, error) {
	var m Manifest
	b, err := json.Marshal(doc)
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

// ratingPrivileges are the capabilities that cost a point (rating_security in the Supervisor's
// apps/utils.py), once however many are asked for.
var ratingPrivileges = []string{"BPF", "CHECKPOINT_RESTORE", "DAC_READ_SEARCH", "NET_ADMIN", "NET_RAW",
	"PERFMON", "SYS_ADMIN", "SYS_MODULE", "SYS_PTRACE", "SYS_RAWIO"}

// SecurityRating is the rating the Supervisor gives the add-on (rating_security): 5, then a
// point up or down per privilege, clamped to 1–8; docker_api or full_access force 1.
// customProfile says whether an apparmor.txt profile ships beside config.yaml.
func SecurityRating(m Manifest, customProfile bool) int {
	r := 5
	switch {
	case m.Apparmor == false:
		r--
	case customProfile:
		r++
	}
	if m.Ingress {
		r += 2
	} else if m.AuthAPI {
		r++
	}
	if m.KernelModules || slices.ContainsFunc(m.Privileged, func(p string) bool { return slices.Contains(ratingPrivileges, p) }) {
		r--
	}
	switch m.HassioRole {
	case "manager":
		r--
	case "admin":
		r -= 2
	}
	if m.HostNetwork {
		r--
	}
	if m.HostPID {
		r -= 2
	}
	if m.HostUTS && slices.Contains(m.Privileged, "SYS_ADMIN") {
		r--
	}
	if m.DockerAPI || m.FullAccess {
		r = 1
	}
	return max(1, min(8, r))
}
