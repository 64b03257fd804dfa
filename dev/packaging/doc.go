// Package packaging checks the Home Assistant add-on that lives at the repository root
// (config.yaml, Dockerfile, run.sh, repository.json, translations, icons) against the rules the
// Supervisor and the add-on linter apply, and against the hamcp binary it ships: every option the
// binary reads is in the add-on's schema and translations, the Dockerfile's build is the one the
// tests run, and `hamcp serve` starts in add-on mode against the simulated Supervisor.
//
// The package's code reads the packaging files; its tests hold the rules. Nothing here is linked
// into hamcp.
package packaging
