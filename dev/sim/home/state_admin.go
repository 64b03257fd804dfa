package home

import (
	"runtime"
	"sync"
	"time"
	"weak"
)

// adminState is what the administration features (HACS, repairs, the
// config entries HA reports beyond those behind devices) keep per home.
// It lives beside the Home, keyed weakly, so those features stay in their
// own files; it never holds the Home itself, or the Home could not be freed.
type adminState struct {
	mu     sync.Mutex
	hacs   []*hacsRepo
	issues []RepairIssue
	// extraEntries are config entries with no devices: HACS itself and an
	// integration that keeps failing to set up, so health checks have
	// something to find.
	extraEntries []EntryDetails
	exposed      map[string]map[string]bool // voice-assistant settings (expose_admin.go)
}

var (
	adminMu sync.Mutex
	admins  = map[weak.Pointer[Home]]*adminState{}
)

// admin returns the home's admin state, seeding it on first use.
func (h *Home) admin() *adminState {
	key := weak.Make(h)
	adminMu.Lock()
	defer adminMu.Unlock()
	if a, ok := admins[key]; ok {
		return a
	}
	created := Epoch(h.start.Add(-90 * 24 * time.Hour))
	a := &adminState{hacs: seedHACS(), issues: seedIssues(h.start), exposed: seedExposed(), extraEntries: []EntryDetails{
		newEntryDetails("01J8Q3ZQ7H5V0T8N2K4M6P8R0S", "hacs", "HACS", "user", "loaded", nil, created),
		newEntryDetails("01J8Q40B2C4D6E8F0G2H4J6K8M", "tuya", "Tuya", "user", "setup_retry",
			strp("Unable to connect to the Tuya cloud: connection timed out"), created),
	}}
	admins[key] = a
	runtime.AddCleanup(h, func(k weak.Pointer[Home]) {
		adminMu.Lock()
		delete(admins, k)
		adminMu.Unlock()
	}, key)
	return a
}
