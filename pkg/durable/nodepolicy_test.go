package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestNodeOptions_PolicyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []NodeOption
		want string
	}{
		{"negative attempts", []NodeOption{WithRetry(RetryPolicy{MaxAttempts: -1})}, "retry policy of node 'a' has a negative value"},
		{"negative backoff", []NodeOption{WithRetry(RetryPolicy{MaxAttempts: 3, InitialBackoff: -time.Second})}, "retry policy of node 'a' has a negative value"},
		{"negative max backoff", []NodeOption{WithRetry(RetryPolicy{MaxBackoff: -1})}, "retry policy of node 'a' has a negative value"},
		{"negative multiplier", []NodeOption{WithRetry(RetryPolicy{Multiplier: -2})}, "retry policy of node 'a' has a negative value"},
		{"negative timeout", []NodeOption{WithTimeout(-time.Second)}, "timeout of node 'a' must not be negative"},
		{"terminal checked first", []NodeOption{Terminal(), WithNext("b"), WithTimeout(-1)}, "terminal nodes cannot define next_node or route_handler_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := NewManifestBuilder[testState]("g")
			b.SetEntrypoint("a")
			err := b.AddNode("a", nodeA, tt.opts...)
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidGraph) {
				t.Fatalf("AddNode = %v, want %q", err, tt.want)
			}
			if _, ok := b.nodeIndex["a"]; ok {
				t.Fatal("a failed AddNode added the node")
			}
		})
	}
}

func TestBuild_FailureRoute_CheckedAndReachable(t *testing.T) {
	t.Parallel()
	b := NewManifestBuilder[testState]("g")
	b.SetEntrypoint("a")
	_ = b.AddNode("a", nodeA, WithNext("b"), WithFailureRoute("zz"))
	_ = b.AddNode("b", nodeA, Terminal())
	if _, err := b.Build(); err == nil || err.Error() != "node 'a' references unknown failure_node 'zz'" || !errors.Is(err, ErrInvalidGraph) {
		t.Fatalf("Build = %v", err)
	}

	// A node reached only by a failure route is reachable.
	b = NewManifestBuilder[testState]("g")
	b.SetEntrypoint("a")
	_ = b.AddNode("a", nodeA, WithNext("b"), WithFailureRoute("oops"))
	_ = b.AddNode("b", nodeA, Terminal())
	_ = b.AddNode("oops", nodeA, Terminal())
	_ = b.AddNode("lost", nodeA, Terminal())
	if _, err := b.Build(); err == nil || err.Error() != "nodes unreachable from entrypoint 'a': ['lost']" {
		t.Fatalf("Build = %v, want only 'lost' unreachable", err)
	}
}

func TestCanonicalTopology_FailureNodeOnlyWhenSet(t *testing.T) {
	t.Parallel()
	build := func(opts ...NodeOption) GraphManifest {
		b := NewManifestBuilder[testState]("g")
		b.SetEntrypoint("a")
		_ = b.AddNode("a", nodeA, append([]NodeOption{WithHandlerName("h.a"), WithNext("b")}, opts...)...)
		_ = b.AddNode("b", nodeA, WithHandlerName("h.a"), Terminal())
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g.Manifest()
	}
	plain := build(WithRetry(RetryPolicy{MaxAttempts: 3}), WithTimeout(time.Second)) // policies stay out of the hash
	bare := build()
	routed := build(WithFailureRoute("b"))
	if plain.GraphHash != bare.GraphHash {
		t.Errorf("retry and timeout changed the hash: %s vs %s", plain.GraphHash, bare.GraphHash)
	}
	canon, _ := routed.CanonicalTopology()
	const node = `"a":{"failure_node":"b","handler_name":"h.a","name":"a","next_node":"b","route_handler_name":null,"terminal":false}`
	if !strings.Contains(string(canon), node) || strings.Count(string(canon), "failure_node") != 1 {
		t.Errorf("canonical %s, want node a as %s and no other failure_node", canon, node)
	}
	if routed.GraphHash == bare.GraphHash {
		t.Error("a failure route did not change the hash")
	}
	bareCanon, _ := bare.CanonicalTopology()
	if strings.Contains(string(bareCanon), "failure_node") {
		t.Errorf("canonical without failure routes mentions failure_node: %s", bareCanon)
	}

	// The manifest's JSON carries the failure route, and a decoded manifest hashes alike.
	raw, err := json.Marshal(routed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"terminal":false,"failure_node":"b"}`) {
		t.Errorf("manifest JSON %s", raw)
	}
	if bareRaw, _ := json.Marshal(bare); strings.Contains(string(bareRaw), "failure_node") {
		t.Errorf("manifest JSON without failure routes mentions failure_node: %s", bareRaw)
	}
	var back GraphManifest
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if h, err := back.ComputeHash(); err != nil || h != routed.GraphHash {
		t.Errorf("decoded manifest hashes %s (%v), want %s", h, err, routed.GraphHash)
	}
}

func TestGraphRegistration_NodePolicy(t *testing.T) {
	t.Parallel()
	b := NewManifestBuilder[testState]("g")
	b.SetEntrypoint("a")
	_ = b.AddNode("a", nodeA, WithNext("b"), WithRetry(RetryPolicy{MaxAttempts: 4}), WithTimeout(time.Minute), WithFailureRoute("b"))
	_ = b.AddNode("b", nodeB, Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := g.NodePolicy("a")
	if p.Retry == nil || p.Retry.MaxAttempts != 4 || p.Timeout != time.Minute || p.FailureNode != "b" {
		t.Fatalf("NodePolicy(a) = %+v", p)
	}
	p.Retry.MaxAttempts = 99 // the caller's copy
	if g.NodePolicy("a").Retry.MaxAttempts != 4 {
		t.Error("NodePolicy shares its retry policy with the caller")
	}
	if p := g.NodePolicy("b"); p != (NodePolicy{}) {
		t.Errorf("NodePolicy(b) = %+v, want the zero policy", p)
	}
	if p := g.NodePolicy("zz"); p != (NodePolicy{}) {
		t.Errorf("NodePolicy(zz) = %+v", p)
	}
	if p := (GraphRegistration[testState]{}).NodePolicy("a"); p != (NodePolicy{}) {
		t.Errorf("zero registration NodePolicy = %+v", p)
	}
}

func TestNonRetryable_KeepsTheMessageAndTheChain(t *testing.T) {
	t.Parallel()
	if NonRetryable(nil) != nil {
		t.Fatal("NonRetryable(nil) is not nil")
	}
	base := fmt.Errorf("read: %w", io.ErrUnexpectedEOF)
	err := NonRetryable(base)
	if err.Error() != base.Error() || !errors.Is(err, io.ErrUnexpectedEOF) || !IsNonRetryable(err) {
		t.Fatalf("NonRetryable: %q, Is %v, IsNonRetryable %v", err, errors.Is(err, io.ErrUnexpectedEOF), IsNonRetryable(err))
	}
	wrapped := &HandlerError{Kind: "node", Name: "a", Err: fmt.Errorf("step: %w", err)}
	if !IsNonRetryable(wrapped) {
		t.Error("IsNonRetryable does not see through wrapping")
	}
	if IsNonRetryable(base) || IsNonRetryable(nil) {
		t.Error("IsNonRetryable of an unmarked error")
	}
}
