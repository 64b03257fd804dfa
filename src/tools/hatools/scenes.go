package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// sceneTools: being written (issue 21).
func sceneTools(d Deps) []*toolkit.Tool { return nil }
