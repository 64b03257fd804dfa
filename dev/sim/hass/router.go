package hass

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// router matches aiohttp-style routes: unknown path → 404, known path with
// another method → 405 with Allow. Path parameters are "{name}"; a trailing
// "{name:*}" takes the rest of the path.
type router struct {
	routes   []route
	notFound string // body for 404s
}

type route struct {
	method string
	parts  []string
	h      func(w http.ResponseWriter, r *http.Request, p params)
}

type params map[string]string

func (rt *router) handle(method, pattern string, h func(w http.ResponseWriter, r *http.Request, p params)) {
	rt.routes = append(rt.routes, route{method: method, parts: strings.Split(strings.TrimPrefix(pattern, "/"), "/"), h: h})
}

func (rt *route) match(path string) (params, bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	p := params{}
	for i, part := range rt.parts {
		if strings.HasSuffix(part, ":*}") {
			if i >= len(segs) {
				return nil, false
			}
			p[strings.TrimSuffix(strings.TrimPrefix(part, "{"), ":*}")] = strings.Join(segs[i:], "/")
			return p, true
		}
		if i >= len(segs) {
			return nil, false
		}
		if strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}") {
			if segs[i] == "" {
				return nil, false
			}
			v, err := url.PathUnescape(segs[i])
			if err != nil {
				return nil, false
			}
			p[part[1:len(part)-1]] = v
			continue
		}
		if part != segs[i] {
			return nil, false
		}
	}
	return p, len(segs) == len(rt.parts)
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	var allow []string
	for i := range rt.routes {
		ro := &rt.routes[i]
		p, ok := ro.match(path)
		if !ok {
			continue
		}
		if ro.method == r.Method || ro.method == http.MethodGet && r.Method == http.MethodHead {
			ro.h(w, r, p)
			return
		}
		allow = append(allow, ro.method)
	}
	if len(allow) > 0 {
		sort.Strings(allow)
		w.Header().Set("Allow", strings.Join(allow, ","))
		plain(w, http.StatusMethodNotAllowed, "405: Method Not Allowed")
		return
	}
	plain(w, http.StatusNotFound, rt.notFound)
}
