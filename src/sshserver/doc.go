// Package sshserver serves MCP stdio sessions over SSH, so that a client which can only spawn a
// process (Claude Desktop) reaches hamcp inside the add-on with `ssh -p 2222 hamcp@homeassistant.local`.
//
// It is deliberately not a general SSH server: public-key login against the configured
// authorized_keys only, and each session channel becomes exactly one MCP session — whatever the
// client asked for (exec of any command, a shell, or the "mcp" subsystem). There is no shell, no
// terminal, no environment passing and no forwarding of any kind.
package sshserver
