package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// backupTools: being written (issue 21).
func backupTools(d Deps) []*toolkit.Tool { return nil }
