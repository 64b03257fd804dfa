package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/oauth"
	"github.com/hamcp/hamcp/src/supervisor"
)

type tokenChecker struct {
	ha  *homeassistant.Client
	err error
}

// checkerFor builds the client used to ask Home Assistant whether a user's token is valid.
func checkerFor(url string, logger *slog.Logger) tokenChecker {
	// The token is per call (ValidateToken); the client's own token is never used.
	c, err := homeassistant.New(homeassistant.Config{BaseURL: url, Token: "unused", Logger: logger})
	return tokenChecker{c, err}
}

// verifiers is the chain for Home Assistant tokens: valid for HA, and belonging to an administrator,
// because hamcp acts with its own administrator access on the caller's behalf.
func (a *App) verifiers(tc tokenChecker) (authn.Chain, error) {
	if tc.err != nil {
		return nil, &config.Error{Option: "ha_auth_url", Source: "configuration", Value: a.haDirect, Reason: tc.err.Error()}
	}
	return authn.Chain{&authn.HAToken{Check: func(ctx context.Context, token string) (string, error) {
		u, err := tc.ha.CurrentUser(ctx, token)
		switch {
		case errors.Is(err, homeassistant.ErrUnauthorized):
			return "", fmt.Errorf("%w: %v", authn.ErrRejected, err)
		case err != nil:
			return "", err
		case !u.IsAdmin:
			return "", fmt.Errorf("%w: %s is not an administrator; hamcp acts with administrator rights, so it needs an administrator's token", authn.ErrForbidden, u.Name)
		}
		return u.ID, nil
	}}}, nil
}

// haDirectURL is Home Assistant's own URL, where users' tokens are checked and OAuth codes
// exchanged: ha_auth_url, else ha_url, else inside the add-on the URL the Supervisor's
// /core/info gives (http or https by core's ssl, core's port, host "homeassistant"; the
// Supervisor's /core/api proxy would show core the Supervisor's user instead of theirs).
func haDirectURL(ctx context.Context, cfg *config.Config, logger *slog.Logger) string {
	fallback := cfg.TokenCheckURL()
	if !cfg.InAddon() || cfg.HAAuthURL != "" || cfg.HAURL != "" {
		return fallback
	}
	sup, err := supervisor.New(supervisor.Config{BaseURL: cfg.SupervisorURL, Token: cfg.SupervisorToken, Logger: logger.With("backend", "supervisor")})
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var u string
		if u, err = sup.CoreURL(ctx, supervisor.CoreHost); err == nil {
			return u
		}
	}
	logger.Warn("could not read core's port and TLS setting from the Supervisor; checking users' tokens at the default address (set ha_auth_url if that is wrong)",
		"url", fallback, "error", err)
	return fallback
}

// haBrowserURL is where the user's browser reaches Home Assistant to log in: ha_external_url, else
// HA's own external_url, else "" (the URL hamcp uses).
func (a *App) haBrowserURL() string {
	if a.Config.HAExternalURL != "" {
		return a.Config.HAExternalURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if cfg, err := a.HA.Config(ctx); err == nil && cfg.ExternalURL != nil && *cfg.ExternalURL != "" {
		return *cfg.ExternalURL
	}
	return ""
}

// oauthBrowserURL is haBrowserURL for the OAuth login. When that is "", the login falls back
// to the URL hamcp itself reaches Home Assistant at (haDirect): fine when the user chose it
// (ha_url, ha_auth_url), but inside the add-on it is the add-on network's
// http://homeassistant:<port>, which no browser resolves. Then OAuth cannot work, and hamcp
// refuses to start with the reason instead of handing out a broken login link.
func (a *App) oauthBrowserURL() (string, error) {
	if u := a.haBrowserURL(); u != "" {
		return u, nil
	}
	if u, err := url.Parse(a.haDirect); err != nil || !internalHosts[strings.ToLower(u.Hostname())] {
		return "", nil
	}
	return "", &config.Error{Option: "ha_external_url", Source: "configuration",
		Reason: "is needed for the OAuth login (external_url is set), and Home Assistant reports no external URL of its own " +
			"(Settings → System → Network → Home Assistant URL → Internet), so users' browsers would have no address to sign in at " +
			"(" + a.haDirect + " only works inside Home Assistant's own network). " +
			"Set ha_external_url to the address your browser opens Home Assistant at (e.g. https://example.ui.nabu.casa), or set Home Assistant's external URL"}
}

// internalHosts are names that resolve only on the add-ons' network.
var internalHosts = map[string]bool{supervisor.CoreHost: true, "supervisor": true}

// oauthFieldOptions names the add-on option behind an oauth.Options field, for error messages.
var oauthFieldOptions = map[string]string{"CIMDPrivateHosts": "oauth_cimd_private_hosts", "CIMDRootCAs": "oauth_cimd_ca_file"}

// oauthCIMDCA reads oauth_cimd_ca_file, the certificates of the household's own MCP clients.
func (a *App) oauthCIMDCA() (string, error) {
	path := a.Config.OAuthCIMDCAFile
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &config.Error{Option: "oauth_cimd_ca_file", Source: "configuration", Value: path,
			Reason: "cannot be read (" + err.Error() + "); put the PEM file in Home Assistant's ssl folder and name it as /ssl/<file>"}
	}
	return string(b), nil
}

// oauthServer builds the OAuth authorization server for external_url.
func (a *App) oauthServer() (*oauth.Server, error) {
	browser, err := a.oauthBrowserURL()
	if err != nil {
		return nil, err
	}
	ca, err := a.oauthCIMDCA()
	if err != nil {
		return nil, err
	}
	o, err := oauth.New(oauth.Options{
		Store:                a.Store,
		Issuer:               strings.TrimSuffix(a.Config.ExternalURL, "/"),
		ResourcePath:         "/mcp",
		HAInternalURL:        a.haDirect,
		HABrowserURL:         browser,
		AllowedRedirectHosts: a.Config.OAuthRedirectHosts,
		GrantLifetime:        a.Config.OAuthGrantLifetime,
		CIMDPrivateHosts:     a.Config.OAuthCIMDPrivateHosts,
		CIMDRootCAs:          ca,
		// hamcp's own administrator access: every refresh lists HA's users (config/auth/list).
		HACommand: a.HA.Call,
		Logger:    a.Logger.With("component", "oauth"),
	})
	if err != nil {
		var fe *oauth.FieldError
		if errors.As(err, &fe) && oauthFieldOptions[fe.Field] != "" {
			return nil, &config.Error{Option: oauthFieldOptions[fe.Field], Source: "configuration", Reason: fe.Reason}
		}
		return nil, &config.Error{Option: "external_url", Source: "configuration", Value: a.Config.ExternalURL, Reason: err.Error()}
	}
	return o, nil
}
