package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// dashboardTools: being written (issue 21).
func dashboardTools(d Deps) []*toolkit.Tool { return nil }
