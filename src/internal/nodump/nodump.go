// Package nodump keeps hamcp's own secrets out of reach of the programs hamcp runs for the model.
//
// A shell command the user allowed runs as the same user as hamcp (root inside the add-on). Without
// this, it could read the Supervisor token or HA_TOKEN straight out of /proc/<hamcp>/environ or
// /proc/<hamcp>/mem, whatever hamcp chose to pass in the command's own environment: unsetting a
// variable does not change /proc/<pid>/environ, which reads the process's original stack. Marking
// the process non-dumpable makes the kernel refuse both files (and ptrace) to any process that
// lacks CAP_SYS_PTRACE, which the add-on's container does not grant.
package nodump

// Protect marks the calling process non-dumpable. Call it once, early, in every long-running mode.
// On systems without the mechanism it does nothing and returns nil.
func Protect() error { return protect() }
