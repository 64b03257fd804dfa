package oauth

import (
	"context"
	"database/sql"
	"net/netip"
)

// Registration (/register) and starting a login (/authorize) need no credential, so their tables
// are bounded by displacement rather than refusal: over a quota, the oldest *unused* entries of the
// busiest address go, and a fresh request always succeeds. One address flooding either endpoint
// only displaces its own entries; many addresses together displace the busiest first. A client
// that holds a grant, or an authorization code on its way to one, is never displaced: those exist
// only after an administrator signed in.
const (
	maxUnusedClients        = 1000 // unused registrations in total
	maxUnusedClientsPerAddr = 20   // unused registrations per address
	maxLogins               = 1000 // logins in memory
	maxLoginsPerAddr        = 20   // pending logins per address
)

// quotaLimits are the bounds above. Tests in this package lower the totals through
// Options.limits so a flood from many addresses fits the CI budget; nothing outside can.
type quotaLimits struct {
	clients, clientsPerAddr, logins, loginsPerAddr int
}

func (q quotaLimits) withDefaults() quotaLimits {
	if q.clients <= 0 {
		q.clients = maxUnusedClients
	}
	if q.clientsPerAddr <= 0 {
		q.clientsPerAddr = maxUnusedClientsPerAddr
	}
	if q.logins <= 0 {
		q.logins = maxLogins
	}
	if q.loginsPerAddr <= 0 {
		q.loginsPerAddr = maxLoginsPerAddr
	}
	return q
}

// addressKey groups requests by where they come from: the IPv4 address, or the IPv6 /64 (one
// subscriber usually holds a whole /64, so per-address quotas on single IPv6 addresses would
// bound nothing).
func addressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.WithZone("").Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// unusedClient is the SQL condition for a registration nobody has signed in with: no grant ever,
// and no live authorization code.
const unusedClient = `c.last_used_at = 0
	AND NOT EXISTS (SELECT 1 FROM oauth_families f WHERE f.client_id = c.client_id)
	AND NOT EXISTS (SELECT 1 FROM oauth_codes k WHERE k.client_id = c.client_id AND k.used_at = 0 AND k.expires_at > ?)`

// evictUnusedClients enforces the registration quotas after a registration from addr.
func evictUnusedClients(ctx context.Context, tx *sql.Tx, q quotaLimits, addr string, nowMs int64) (evicted int64, err error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM oauth_clients WHERE client_id IN (
		SELECT c.client_id FROM oauth_clients c WHERE c.registered_from = ? AND `+unusedClient+`
		ORDER BY c.created_at DESC, c.rowid DESC LIMIT -1 OFFSET ?)`, addr, nowMs, q.clientsPerAddr)
	if err != nil {
		return 0, err
	}
	evicted, _ = res.RowsAffected()
	for {
		// Every unused client has last_used_at = 0, so the cheap indexed count bounds the exact one;
		// the exact count only runs when the table is near the cap.
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM oauth_clients WHERE last_used_at = 0`).Scan(&n); err != nil {
			return evicted, err
		}
		if n > q.clients {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM oauth_clients c WHERE `+unusedClient, nowMs).Scan(&n); err != nil {
				return evicted, err
			}
		}
		if n <= q.clients {
			return evicted, nil
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM oauth_clients WHERE client_id IN (
			SELECT c.client_id FROM oauth_clients c WHERE `+unusedClient+` AND c.registered_from = (
				SELECT c.registered_from FROM oauth_clients c WHERE `+unusedClient+`
				GROUP BY c.registered_from ORDER BY count(*) DESC, min(c.created_at) LIMIT 1)
			ORDER BY c.created_at, c.rowid LIMIT ?)`, nowMs, nowMs, n-q.clients)
		if err != nil {
			return evicted, err
		}
		k, _ := res.RowsAffected()
		if k == 0 {
			return evicted, nil
		}
		evicted += k
	}
}
