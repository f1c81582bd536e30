package engine

// Properties of a rewound run's step (rewind.go).
const (
	// pReroute marks a run rewound at a route that failed after its node completed: the next
	// visit resolves the route on the stored state without running the node again.
	pReroute = "Reroute"
	// pCarryBase is the first sequence of the region a fan-out's rewind carries its completed
	// branches from (0: none): the open region's branches whose row there is branch_completed
	// copy it instead of running their node again (rewind_branch.go).
	pCarryBase = "CarryBase"
)

// headRewind is the part of the head a rewind keeps until the step it rewound commits.
type headRewind struct {
	reroute   bool
	carryBase int64
}

// headRewindProps declares the properties of headRewind: written only by a rewind, and
// cleared by the commit that ends the rewound step (buildCommit clears reroute; closeRegion
// clears carryBase with the region).
var headRewindProps = []headProp{
	boolProp(pReroute, propCompared, func(h *head) *bool { return &h.reroute }),
	intProp(pCarryBase, propCompared, func(h *head) *int64 { return &h.carryBase }),
}
