package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client ID Metadata Documents: the client id is an https URL whose JSON describes the client. The
// fetch is bounded (5 s, 64 KB, no redirects), only goes to hosts that are allowed as redirect
// hosts anyway, and only connects to public addresses (cimd_dial.go), so a stranger cannot make
// hamcp fetch internal URLs; every way a fetch can fail looks the same to the client, so the
// error cannot be used to probe which ports are open.
const (
	cimdTimeout   = 5 * time.Second
	cimdMaxBytes  = 64 << 10
	cimdTTL       = time.Hour
	cimdMinTTL    = time.Minute
	cimdMaxTTL    = 24 * time.Hour
	cimdErrorTTL  = 30 * time.Second
	cimdCacheSize = 256
)

type cimdEntry struct {
	c       *client
	err     error
	expires time.Time
}

type cimdCache struct {
	mu      sync.Mutex
	entries map[string]cimdEntry
}

func newCIMDCache() *cimdCache { return &cimdCache{entries: map[string]cimdEntry{}} }

func (k *cimdCache) get(id string, now time.Time) (cimdEntry, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.entries[id]
	if !ok || !now.Before(e.expires) {
		return cimdEntry{}, false
	}
	return e, true
}

func (k *cimdCache) put(id string, e cimdEntry, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.entries) >= cimdCacheSize {
		for key, old := range k.entries {
			if !now.Before(old.expires) {
				delete(k.entries, key)
			}
		}
		for key := range k.entries {
			if len(k.entries) < cimdCacheSize {
				break
			}
			delete(k.entries, key)
		}
	}
	k.entries[id] = e
}

// checkCIMDClientID applies the draft's rules to the client id URL before anything is fetched.
func (s *Server) checkCIMDClientID(id string) (*url.URL, error) {
	u, err := url.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("client_id %q is not a URL: %v", id, err)
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case u.Scheme == "https":
		if !s.allowed[host] && !s.cimdHTTP[strings.ToLower(u.Host)] && !s.cimdPrivate.hasURL(u) {
			return nil, fmt.Errorf("client_id host %q is not an allowed client host; add it to the allowed redirect hosts option if you trust this client", host)
		}
	case u.Scheme == "http" && s.cimdHTTP[strings.ToLower(u.Host)]:
	default:
		return nil, fmt.Errorf("client_id %q must be an https URL", id)
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(id, "#") {
		return nil, fmt.Errorf("client_id %q must not carry user info or a fragment", id)
	}
	if strings.Trim(u.Path, "/") == "" {
		return nil, fmt.Errorf("client_id %q must have a path naming the metadata document", id)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, fmt.Errorf("client_id %q must not contain . or .. path segments", id)
		}
	}
	return u, nil
}

// fetchCIMD returns the client a metadata document describes, from cache when it is fresh.
func (s *Server) fetchCIMD(ctx context.Context, id string) (*client, error) {
	now := s.now()
	if e, ok := s.cimd.get(id, now); ok {
		return e.c, e.err
	}
	c, ttl, err := s.loadCIMD(ctx, id)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		var fe *fetchError
		if errors.As(err, &fe) {
			s.log.Warn("client metadata document could not be fetched", "client_id", id, "err", fe.detail)
		} else {
			s.log.Warn("client metadata document refused", "client_id", id, "err", err)
		}
		s.cimd.put(id, cimdEntry{err: err, expires: now.Add(cimdErrorTTL)}, now)
		return nil, err
	}
	s.cimd.put(id, cimdEntry{c: c, expires: now.Add(ttl)}, now)
	return c, nil
}

func (s *Server) loadCIMD(ctx context.Context, id string) (*client, time.Duration, error) {
	u, err := s.checkCIMDClientID(id)
	if err != nil {
		return nil, 0, err
	}
	fetcher := s.cimdClient
	if s.cimdPrivate.hasURL(u) {
		fetcher = s.cimdPrivateClient
	}
	ctx, cancel := context.WithTimeout(ctx, cimdTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := fetcher.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return nil, 0, err
		}
		return nil, 0, &fetchError{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, &fetchError{fmt.Errorf("HTTP %d (redirects are not followed)", resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, cimdMaxBytes+1))
	if err != nil {
		return nil, 0, &fetchError{err}
	}
	if len(body) > cimdMaxBytes {
		return nil, 0, errors.New("the client metadata document is larger than 64 KB")
	}
	c, err := parseCIMD(body, id, s.allowed)
	if err != nil {
		return nil, 0, err
	}
	return c, cacheTTL(resp.Header.Get("Cache-Control")), nil
}

// fetchError is every failure to get the document's bytes: a refused address, a closed or open
// port, a TLS failure, a timeout or a non-200 answer. The client only ever sees one sentence, so
// it cannot map hamcp's network; the detail goes to the log.
type fetchError struct{ detail error }

func (e *fetchError) Error() string {
	return "the client metadata document could not be fetched (it must be served with HTTP 200 over https from a public address)"
}

func (e *fetchError) Unwrap() error { return e.detail }

// parseCIMD validates a metadata document for the client id it was fetched from.
func parseCIMD(body []byte, id string, allowed hostSet) (*client, error) {
	m, err := parseClientMetadata(body, allowed, false)
	if err != nil {
		var me *metadataError
		if errors.As(err, &me) {
			return nil, fmt.Errorf("client metadata document: %s", me.desc)
		}
		return nil, err
	}
	if m.ClientID != id {
		return nil, fmt.Errorf("client metadata document: its client_id %q is not the URL it was fetched from", m.ClientID)
	}
	return &client{ID: id, Name: m.ClientName, RedirectURIs: m.RedirectURIs, GrantTypes: m.GrantTypes, AuthMethod: "none", CIMD: true}, nil
}

// cacheTTL honours the document's max-age within sane bounds.
func cacheTTL(cc string) time.Duration {
	for _, part := range strings.Split(cc, ",") {
		part = strings.TrimSpace(strings.ToLower(part))
		if part == "no-store" || part == "no-cache" {
			return cimdMinTTL
		}
		if v, ok := strings.CutPrefix(part, "max-age="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				continue
			}
			return min(max(time.Duration(n)*time.Second, cimdMinTTL), cimdMaxTTL)
		}
	}
	return cimdTTL
}
