package panel

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// ---- Status ----

type statusData struct {
	Status
	Uptime string
}

func (p *Panel) statusPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
	defer cancel()
	s := p.o.Status(ctx)
	p.render(w, r, "status", "Status", statusData{Status: s, Uptime: roughDuration(p.o.Permissions.Uptime())})
}

func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return count(int(d.Seconds()), "second")
	case d < time.Hour:
		return count(int(d.Minutes()), "minute")
	case d < 48*time.Hour:
		return count(int(d.Hours()), "hour") + " " + count(int(d.Minutes())%60, "minute")
	}
	return count(int(d.Hours())/24, "day") + " " + count(int(d.Hours())%24, "hour")
}

func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
