package engine

// Head properties of an open fan-out.
const pBranchBase, pBranchCount, pBranchSpec = "BranchBase", "BranchCount", "BranchSpec"

// headFanOut is the part of the head that an open fan-out keeps (branch.go): its region of
// history starts at branchBase (0: none) and holds branchCount branches; branchSpec is the
// sequence of the route_resolved row that lists them.
type headFanOut struct {
	branchBase, branchCount, branchSpec int64
	// branchRows caches the region's completion rows read by this handling (not stored).
	branchRows []Entity
}

// headFanOutProps declares the properties of headFanOut: written only while a run fans out
// (a start writes none; a step's merge those it changed; branch.go writes them on a fan-out
// and clears them on its join).
var headFanOutProps = []headProp{
	intProp(pBranchBase, propCompared, func(h *head) *int64 { return &h.branchBase }),
	intProp(pBranchCount, propCompared, func(h *head) *int64 { return &h.branchCount }),
	intProp(pBranchSpec, propCompared, func(h *head) *int64 { return &h.branchSpec }),
}
