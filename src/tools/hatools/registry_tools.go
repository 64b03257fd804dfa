package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// registryTools: being written (issue 21).
func registryTools(d Deps) []*toolkit.Tool { return nil }
