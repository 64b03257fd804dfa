package hass

import "net/http"

// REST routes for administration: the config entry list the integrations page reads.
func init() {
	extraRoutes = append(extraRoutes, func(s *Server, rt *router) {
		// The hook runs once as the server is built, which is also when the home gets the
		// reload services a real install has (ha_reload_config calls them).
		s.h.RegisterReloadServices()
		rt.handle("GET", "/api/config/config_entries/entry", s.authed(true, func(w http.ResponseWriter, r *http.Request, p params, u *user) {
			q := r.URL.Query()
			var types []string
			if q.Has("type") {
				// One type only, and an unknown one simply matches nothing, as in HA's view.
				types = []string{q.Get("type")}
			}
			writeJSON(w, 200, s.h.ConfigEntryDetails(q.Get("domain"), types))
		}))
	})
}
