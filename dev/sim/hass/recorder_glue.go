package hass

import (
	"time"

	"github.com/hamcp/hamcp/dev/sim/recorder"
)

type logbookEntry = recorder.LogbookEntry

func historyOpts(ids []string, start, end time.Time, initial, significant, minimal, noAttrs bool) recorder.HistoryOptions {
	return recorder.HistoryOptions{EntityIDs: ids, Start: start, End: end, IncludeStartState: initial,
		SignificantChangesOnly: significant, MinimalResponse: minimal, NoAttributes: noAttrs}
}
