package home

// reloadDomains are YAML-configured integrations every default install has that the demo
// model keeps no entities for; their reload services exist all the same, and reload nothing.
var reloadDomains = []string{"group", "template", "input_datetime", "input_button", "person", "zone", "timer", "counter", "schedule"}

// RegisterReloadServices adds the reload services of reloadDomains and frontend.reload_themes
// that are missing. Calling it again adds nothing.
func (h *Home) RegisterReloadServices() {
	h.mu.Lock()
	defer h.mu.Unlock()
	add := func(domain, name, title, desc string) {
		if h.services[domain][name] != nil {
			return
		}
		h.addService(&serviceDef{domain: domain, name: name, title: title, desc: desc, run: func(c *call) (any, error) {
			c.h.Log("info", "homeassistant.components."+domain, "Reloaded %s from YAML", domain)
			return nil, nil
		}})
	}
	for _, d := range reloadDomains {
		add(d, "reload", "Reload", "Reloads "+d+" from the YAML-configuration.")
	}
	add("frontend", "reload_themes", "Reload themes", "Reloads themes from the YAML-configuration.")
}
