package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// ActionParallel fans the run out into branches that run at once, each one node visit with
// its own input (RouteDecision.Branches), and then continues at RouteDecision.JoinNode once
// every branch has completed, with the branches' updates merged into the state (see
// ManifestBuilder.Reduce). Make it with Parallel or Map.
const ActionParallel RouteAction = "parallel"

// Limits of one fan-out, checked when a route returns it (ErrInvalidRouteDecision).
const (
	// MaxBranches is the widest fan-out: a decision with more branches fails the run. The
	// engine reserves a few history rows per branch, and each branch is its own work item.
	MaxBranches = 256
	// MaxBranchItemBytes bounds the JSON of one branch's item (Map), which travels in the
	// branch's queue message.
	MaxBranchItemBytes = 32 << 10
)

// Branch is one branch of a fan-out: the node it runs and the item it runs on (JSON; null
// for a branch of Parallel).
type Branch struct {
	// Node is the node the branch visits.
	Node string `json:"node"`
	// Item is the branch's own input, read with BranchFrom or BranchItem; null for Parallel.
	Item json.RawMessage `json:"item"`
}

// Parallel returns a decision to run nodes at once, one branch each, on the state as it is
// now, then to continue at join with their updates merged. A branch visits its node only:
// the node's next node and route are not followed. Two branches that update the same state
// field fail the run at the join unless the field has a reducer (ManifestBuilder.Reduce).
// No nodes: the run continues at join at once.
func Parallel(join string, nodes ...string) RouteDecision {
	bs := make([]Branch, len(nodes))
	for i, n := range nodes {
		bs[i] = Branch{Node: n}
	}
	return RouteDecision{Action: ActionParallel, Branches: bs, JoinNode: join}
}

// Map returns a decision to visit node once per element of items (a slice or array), at
// once, each branch with its element as its item (encoded as JSON, read back with
// BranchItem), then to continue at join with their updates merged in item order, as
// LangGraph's Send. The join comes first, as in Parallel:
//
//	return durable.Map("summarize", "research", s.Topics), nil
//
// An empty slice continues at join at once. items that are not a slice, or whose elements do
// not encode as JSON, make the decision invalid: the run fails with the reason.
func Map(join, node string, items any) RouteDecision {
	d := RouteDecision{Action: ActionParallel, JoinNode: join}
	v := reflect.ValueOf(items)
	if items == nil || (v.Kind() != reflect.Slice && v.Kind() != reflect.Array) {
		d.branchErr = fmt.Sprintf("durable.Map needs a slice of items, got %T", items)
		return d
	}
	if v.Len() > MaxBranches {
		d.branchErr = fmt.Sprintf("parallel fan-out of %d branches is above the limit of %d", v.Len(), MaxBranches)
		return d
	}
	d.Branches = make([]Branch, v.Len())
	for i := range v.Len() {
		raw, err := json.Marshal(v.Index(i).Interface())
		if err != nil {
			d.branchErr = fmt.Sprintf("encode item %d of durable.Map: %v", i, err)
			return d
		}
		d.Branches[i] = Branch{Node: node, Item: raw}
	}
	return d
}

// normalizeParallel validates a parallel decision: a join node, at most MaxBranches
// branches, each with a node and an item of valid JSON of at most MaxBranchItemBytes
// (compacted; none is null).
func (d RouteDecision) normalizeParallel() (RouteDecision, error) {
	d.NextNode, d.EventName, d.ResumeNode = "", "", ""
	switch {
	case d.branchErr != "":
		return d, newError(ErrInvalidRouteDecision, d.branchErr)
	case d.JoinNode == "":
		return d, newError(ErrInvalidRouteDecision, "action 'parallel' requires join_node")
	case len(d.Branches) > MaxBranches:
		return d, newError(ErrInvalidRouteDecision, fmt.Sprintf("parallel fan-out of %d branches is above the limit of %d", len(d.Branches), MaxBranches))
	}
	bs := make([]Branch, len(d.Branches))
	for i, b := range d.Branches {
		if b.Node == "" {
			return d, newError(ErrInvalidRouteDecision, fmt.Sprintf("parallel branch %d requires a node", i))
		}
		item := bytes.TrimSpace(b.Item)
		if len(item) == 0 {
			item = []byte("null")
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, item); err != nil {
			return d, newError(ErrInvalidRouteDecision, fmt.Sprintf("parallel branch %d item is not valid JSON", i))
		}
		if buf.Len() > MaxBranchItemBytes {
			return d, newError(ErrInvalidRouteDecision, fmt.Sprintf("parallel branch %d item of %d bytes is above the limit of %d bytes", i, buf.Len(), MaxBranchItemBytes))
		}
		bs[i] = Branch{Node: b.Node, Item: buf.Bytes()}
	}
	d.Branches = bs
	return d, nil
}

// checkParallelTargets verifies that the join node and every branch's node exist.
func (r *registration[S]) checkParallelTargets(d RouteDecision) error {
	for _, n := range append([]string{d.JoinNode}, branchNodes(d.Branches)...) {
		if _, ok := r.nodes[n]; !ok {
			return newError(ErrUnknownNode, fmt.Sprintf("route decision references unknown node '%s' in graph '%s'", n, r.manifest.GraphName))
		}
	}
	return nil
}

func branchNodes(bs []Branch) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Node
	}
	return out
}

// isZero reports whether d is the zero RouteDecision (no decision).
func (d RouteDecision) isZero() bool {
	return d.Action == "" && d.NextNode == "" && d.EventName == "" && d.ResumeNode == "" && d.Note == "" &&
		d.Timeout == 0 && d.TimeoutNode == "" && d.JoinNode == "" && d.Branches == nil && d.branchErr == ""
}

// BranchInfo tells a node handler that it runs in a fan-out branch, and on what.
type BranchInfo struct {
	// Index is the branch's position in the fan-out, from 0.
	Index int
	// Count is the number of branches of the fan-out.
	Count int
	// Node is the node the branch visits.
	Node string
	// Item is the branch's item (JSON; null for a branch of Parallel).
	Item json.RawMessage
}

// BranchFrom returns the BranchInfo of the branch the handler runs in; false outside a
// branch.
func BranchFrom(ctx context.Context) (BranchInfo, bool) {
	info, ok := graphrun.Branch(ctx).(BranchInfo)
	return info, ok
}

// ErrNotInBranch is returned by BranchItem outside a fan-out branch.
var ErrNotInBranch = errors.New("durable: handler does not run in a branch")

// BranchItem decodes the item of the branch the handler runs in (Map's element) into T.
// Errors: ErrNotInBranch outside a branch, or the decoding error.
func BranchItem[T any](ctx context.Context) (T, error) {
	var v T
	info, ok := BranchFrom(ctx)
	if !ok {
		return v, ErrNotInBranch
	}
	if err := json.Unmarshal(info.Item, &v); err != nil {
		return v, fmt.Errorf("decode item of branch %d: %w", info.Index, err)
	}
	return v, nil
}
