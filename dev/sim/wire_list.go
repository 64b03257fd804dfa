package sim

// Routes lists the REST routes the simulated Home Assistant and Supervisor serve, each as
// "METHOD /pattern" (for docs/home-assistant-fidelity.md's test).
func (h *Home) Routes() (homeAssistant, supervisor []string) {
	return h.srv.RouteList(), h.sup.RouteList()
}
