package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// calendarEventTools: being written (issue 21).
func calendarEventTools(d Deps) []*toolkit.Tool { return nil }
