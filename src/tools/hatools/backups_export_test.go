package hatools

import "time"

// SetBackupWaits shortens how long create waits for a backup and install for an update, for
// tests that hold them; the returned func puts them back.
func SetBackupWaits(backup, update time.Duration) (restore func()) {
	b, u := backupWait, updateWait
	backupWait, updateWait = backup, update
	return func() { backupWait, updateWait = b, u }
}
