package rules

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nathan-osman/go-sunrise"
)

// site is where the hub is: its time zone (every schedule is computed in it, so a 07:00 trigger
// stays at 07:00 across a DST change) and its coordinates for sunrise and sunset. Sun times come
// from github.com/nathan-osman/go-sunrise: NOAA's sunrise equation, pure Go, no dependencies,
// tagged releases, accurate to about a minute below the polar circles — the precision Hubitat's
// own location.sunrise has.
type site struct {
	loc      *time.Location
	lat, lon float64
	hasCoord bool
	err      string // why the time zone or coordinates are missing ("" when known)
	source   string // where they came from when not the hub: Home Assistant's configuration, and why
}

// Place is where the home is, from another source than the hub: its IANA time zone and
// coordinates (0, 0 for unknown).
type Place struct {
	TimeZone            string
	Latitude, Longitude float64
}

// errNoSun is sun times asked for where the hub's coordinates are unknown.
var errNoSun = errors.New("the hub's latitude and longitude are unknown (set the location in the hub's settings; hamcp reads it with a Hub Security login when one is set)")

// siteTimeout bounds each question to the hub at Start, so a hub that is down delays hamcp's
// start by seconds, not minutes.
const siteTimeout = 5 * time.Second

// siteRetry is how often the engine asks again for a location the hub did not answer.
const siteRetry = 5 * time.Minute

// loadSite reads the hub's time zone and coordinates at Start. When the hub does not answer,
// it asks again every siteRetry and, once it has them, re-schedules the time triggers.
func (e *Engine) loadSite(ctx context.Context) {
	answered := e.readSite(ctx)
	if !answered {
		e.mu.Lock()
		if !e.closed {
			e.siteTimer = e.clock.AfterFunc(siteRetry, e.retrySite)
		}
		e.mu.Unlock()
	}
}

func (e *Engine) retrySite() {
	if !e.readSite(e.ctx) {
		e.loadSite(e.ctx)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, st := range e.rules {
		if st.rule.Enabled && !e.closed {
			e.disarmLocked(st, false)
			e.armLocked(st)
		}
	}
}

// readSite reads the hub's location into e.site and reports whether the hub answered. What the
// hub does not give (it may report no location, or need a login hamcp does not have) comes from
// Options.HomePlace, the add-on's Home Assistant, when there is one.
func (e *Engine) readSite(ctx context.Context) bool {
	answered := true
	var tz string
	var lat, lon float64
	why := "" // why the hub gave no location
	if e.o.Hub == nil {
		why = "no hub configured"
	} else {
		hctx, cancel := context.WithTimeout(ctx, siteTimeout)
		info, err := e.o.Hub.HubInfo(hctx)
		cancel()
		switch {
		case err != nil:
			answered = false
			why = fmt.Sprintf("could not read the hub's location (%v)", err)
		case info.TimeZone == "" || (info.Latitude == 0 && info.Longitude == 0):
			tz, lat, lon = info.TimeZone, info.Latitude, info.Longitude
			why = "the hub reports no time zone or coordinates"
		default:
			tz, lat, lon = info.TimeZone, info.Latitude, info.Longitude
		}
	}
	fromHA := false
	if why != "" && e.o.HomePlace != nil {
		// Its own time: a hub that timed out must not leave Home Assistant no time to answer.
		pctx, cancel := context.WithTimeout(ctx, siteTimeout)
		p, err := e.o.HomePlace(pctx)
		cancel()
		switch {
		case err != nil:
			why += fmt.Sprintf("; Home Assistant's location could not be read either (%v)", err)
		case p.TimeZone != "" || p.Latitude != 0 || p.Longitude != 0:
			fromHA = true
			if tz == "" {
				tz = p.TimeZone
			}
			if lat == 0 && lon == 0 {
				lat, lon = p.Latitude, p.Longitude
			}
		}
	}
	var s site
	switch {
	case fromHA:
		s = siteFrom(tz, lat, lon)
		s.source = "Home Assistant's configuration (" + why + ")"
	case !answered || e.o.Hub == nil:
		s = site{loc: time.UTC, err: why + ": schedules use UTC and sun times are unavailable"}
		if !answered {
			s.err += " until it answers"
		}
	default:
		s = siteFrom(tz, lat, lon)
	}
	if s.err != "" {
		e.log.Warn("rule engine location", "problem", s.err)
	}
	e.mu.Lock()
	e.site = s
	e.mu.Unlock()
	return answered
}

// siteFrom makes a site from the hub's time zone name and coordinates. (0, 0) is what a hub
// without a location reports, so it counts as unknown.
func siteFrom(tz string, lat, lon float64) site {
	s := site{loc: time.UTC, lat: lat, lon: lon, hasCoord: lat != 0 || lon != 0}
	if tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			s.err = fmt.Sprintf("the hub's time zone %q is unknown here: schedules use UTC", tz)
		} else {
			s.loc = loc
		}
	} else {
		s.err = "the hub reports no time zone: schedules use UTC"
	}
	if !s.hasCoord && s.err == "" {
		s.err = errNoSun.Error()
	}
	return s
}

// sun returns the sunrise and sunset of day's calendar date in the site's time zone. Polar day
// or night (no sunrise or sunset that day) is an error saying so.
func (s site) sun(day time.Time) (time.Time, time.Time, error) {
	if !s.hasCoord {
		return time.Time{}, time.Time{}, errNoSun
	}
	d := day.In(s.loc)
	rise, set := sunrise.SunriseSunset(s.lat, s.lon, d.Year(), d.Month(), d.Day())
	if rise.IsZero() || set.IsZero() {
		return time.Time{}, time.Time{}, fmt.Errorf("the sun does not rise or set on %s at the hub's latitude", d.Format(time.DateOnly))
	}
	return rise.In(s.loc), set.In(s.loc), nil
}
