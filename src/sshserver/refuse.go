package sshserver

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

const (
	serverVersion = "SSH-2.0-hamcp"

	msgDisconnect            = 1  // RFC 4253 §11.1
	reasonTooManyConnections = 12 // SSH_DISCONNECT_TOO_MANY_CONNECTIONS
)

// refuseBusy tells a client over the connection cap why it is turned away, as an SSH disconnect
// sent right after the version exchange. OpenSSH prints it ("Received disconnect … too many SSH
// connections"), which beats a bare closed socket, and it costs no key exchange.
func refuseBusy(nc net.Conn, limit int) {
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(2 * time.Second))
	msg := fmt.Sprintf("hamcp: too many SSH connections (limit %d); close another session or try again later", limit)
	if _, err := nc.Write(append([]byte(serverVersion+"\r\n"), disconnectPacket(reasonTooManyConnections, msg)...)); err != nil {
		return
	}
	// Read until the client hangs up: closing with its version and key exchange still unread
	// would reset the connection and could discard our message before the client reads it.
	_, _ = io.CopyN(io.Discard, nc, 64<<10)
}

// disconnectPacket frames SSH_MSG_DISCONNECT as an unencrypted binary packet (RFC 4253 §6),
// which is what a packet sent before key exchange is.
func disconnectPacket(reason uint32, description string) []byte {
	payload := []byte{msgDisconnect}
	payload = binary.BigEndian.AppendUint32(payload, reason)
	payload = binary.BigEndian.AppendUint32(payload, uint32(len(description)))
	payload = append(payload, description...)
	payload = binary.BigEndian.AppendUint32(payload, 0) // language tag: empty
	// Packet length, padding length, payload and padding must add up to a multiple of 8, with at
	// least 4 bytes of padding.
	pad := 8 - (5+len(payload))%8
	if pad < 4 {
		pad += 8
	}
	pkt := binary.BigEndian.AppendUint32(nil, uint32(1+len(payload)+pad))
	pkt = append(pkt, byte(pad))
	pkt = append(pkt, payload...)
	return append(pkt, make([]byte, pad)...)
}
