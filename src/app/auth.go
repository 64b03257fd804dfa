package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/oauth"
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
		return nil, &config.Error{Option: "ha_auth_url", Source: "configuration", Value: a.Config.TokenCheckURL(), Reason: tc.err.Error()}
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

// oauthServer builds the OAuth authorization server for external_url.
func (a *App) oauthServer() (*oauth.Server, error) {
	browser := a.Config.HAExternalURL
	if browser == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if cfg, err := a.HA.Config(ctx); err == nil && cfg.ExternalURL != nil && *cfg.ExternalURL != "" {
			browser = *cfg.ExternalURL
		}
	}
	o, err := oauth.New(oauth.Options{
		Store:                a.Store,
		Issuer:               strings.TrimSuffix(a.Config.ExternalURL, "/"),
		ResourcePath:         "/mcp",
		HAInternalURL:        a.Config.TokenCheckURL(),
		HABrowserURL:         browser,
		AllowedRedirectHosts: a.Config.OAuthRedirectHosts,
		Logger:               a.Logger.With("component", "oauth"),
	})
	if err != nil {
		return nil, &config.Error{Option: "external_url", Source: "configuration", Value: a.Config.ExternalURL, Reason: err.Error()}
	}
	return o, nil
}
