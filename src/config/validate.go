package config

import (
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Validate checks every option against its rule and the cross-option rules.
func (c *Config) Validate() error {
	v := reflect.ValueOf(c).Elem()
	for _, o := range Options() {
		if err := checkRule(v.Field(o.index), o.Rule); err != nil {
			return &Error{Option: o.Name, Source: "configuration", Value: secretSafe(o, fmt.Sprint(v.Field(o.index).Interface())), Reason: err.Error()}
		}
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return &Error{Option: "listen", Source: "configuration", Value: c.Listen, Reason: "must be host:port, e.g. :8099 or 127.0.0.1:8099"}
	}
	for _, u := range []struct{ name, val string }{{"external_url", c.ExternalURL}, {"ha_url", c.HAURL}, {"ha_auth_url", c.HAAuthURL}, {"supervisor_url", c.SupervisorURL}, {"ha_external_url", c.HAExternalURL}} {
		if u.val == "" {
			continue
		}
		p, err := url.Parse(u.val)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return &Error{Option: u.name, Source: "configuration", Value: u.val, Reason: "must be an http:// or https:// URL with a host, e.g. http://homeassistant.local:8123"}
		}
	}
	for _, o := range c.AllowedOrigins {
		if o == "*" {
			return &Error{Option: "allowed_origins", Source: "configuration", Value: o, Reason: "must list exact origins such as https://example.com; * is not allowed"}
		}
		p, err := url.Parse(o)
		if err != nil || p.Scheme == "" || p.Host == "" || (p.Path != "" && p.Path != "/") {
			return &Error{Option: "allowed_origins", Source: "configuration", Value: o, Reason: "must be origins like https://example.com (scheme and host, no path)"}
		}
	}
	for _, p := range c.TrustedProxies {
		if _, _, err := net.ParseCIDR(p); err != nil && net.ParseIP(p) == nil {
			return &Error{Option: "trusted_proxies", Source: "configuration", Value: p, Reason: "must be IP addresses or CIDR ranges, e.g. 172.30.32.0/23"}
		}
	}
	return nil
}

// checkRule enforces the small rule language of the validate tags: oneof, min, max.
func checkRule(f reflect.Value, rule string) error {
	if rule == "" {
		return nil
	}
	for _, r := range strings.Split(rule, ",") {
		tag, param, _ := strings.Cut(r, "=")
		switch tag {
		case "oneof":
			allowed := strings.Fields(param)
			s := f.String()
			ok := false
			for _, a := range allowed {
				if s == a {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("is not accepted; accepted values: %s", strings.Join(allowed, ", "))
			}
		case "min", "max":
			var n, limit float64
			if d, isDur := f.Interface().(time.Duration); isDur {
				pd, err := time.ParseDuration(param)
				if err != nil {
					pd = 0
				}
				n, limit = float64(d), float64(pd)
			} else {
				n = float64(f.Int())
				limit, _ = strconv.ParseFloat(param, 64)
			}
			if tag == "min" && n < limit {
				return fmt.Errorf("must be at least %s", param)
			}
			if tag == "max" && n > limit {
				return fmt.Errorf("must be at most %s", param)
			}
		}
	}
	return nil
}
