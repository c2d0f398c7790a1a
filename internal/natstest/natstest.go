// Package natstest starts an embedded NATS server for tests, on a random
// loopback port, so that no test needs a broker installed.
//
//	srv := natstest.Start(t)
//	url := srv.URL() // nats://127.0.0.1:PORT
package natstest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is an embedded NATS server.
type Server struct {
	t    testing.TB
	opts *server.Options
	srv  *server.Server
}

// Start starts a server on a random loopback port; it is shut down when
// the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, opts: &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true}}
	s.start()
	t.Cleanup(s.Shutdown)
	return s
}

// StartWithUser starts a server that requires a user name and password.
func StartWithUser(t testing.TB, user, password string) *Server {
	t.Helper()
	s := &Server{t: t, opts: &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true, Username: user, Password: password}}
	s.start()
	t.Cleanup(s.Shutdown)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	srv, err := server.NewServer(s.opts)
	if err != nil {
		s.t.Fatalf("nats server: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		s.t.Fatal("nats server did not start")
	}
	s.srv = srv
	// Later restarts keep the port.
	if a, ok := srv.Addr().(*net.TCPAddr); ok {
		s.opts.Port = a.Port
	}
}

// URL returns the server's client URL, nats://127.0.0.1:PORT.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.opts.Port) }

// Shutdown stops the server (a test of a lost broker calls it mid-run).
func (s *Server) Shutdown() {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
	}
}

// Subscriptions returns the number of subscriptions the server holds,
// its own internal ones included (read it before starting the processes
// under test, and wait for that many more).
func (s *Server) Subscriptions() int { return int(s.srv.NumSubscriptions()) }

// WaitSubscriptions waits until the server holds at least n
// subscriptions, its own included (the processes under test have
// subscribed).
func (s *Server) WaitSubscriptions(n int, timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for s.Subscriptions() < n {
		if time.Now().After(deadline) {
			s.t.Fatalf("nats server: %d subscriptions after %s, want %d", s.Subscriptions(), timeout, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitSubscriptionsAtMost waits until the server holds at most n
// subscriptions (the connections of earlier runs are gone).
func (s *Server) WaitSubscriptionsAtMost(n int, timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for s.Subscriptions() > n {
		if time.Now().After(deadline) {
			s.t.Fatalf("nats server: %d subscriptions after %s, want at most %d", s.Subscriptions(), timeout, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
