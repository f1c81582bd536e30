package engine

// Head properties of the step's hold (hold.go).
const pHolder, pHoldUntil, pRestarts = "Holder", "HoldUntil", "Restarts"

// headHold is the part of the head that the hold of the current step keeps (hold.go).
type headHold struct {
	// holder names the start that holds the current step (a redelivered start writes it
	// before user code runs), holdUntil the end of its lease in unix nanos; "" and 0 when
	// nobody holds it. Every commit clears them; a start that ends without a commit releases
	// them.
	holder    string
	holdUntil int64
	// restarts counts the starts of the current step that its worker did not survive: holds
	// found unreleased past their lease (hold.go), cleared by every commit (see the kill limit
	// in workitem.go).
	restarts int64
}

// headHoldProps declares the properties of headHold: every step rewrites them.
var headHoldProps = []headProp{
	strProp(pHolder, propStep, func(h *head) *string { return &h.holder }),
	intProp(pHoldUntil, propStep, func(h *head) *int64 { return &h.holdUntil }),
	intProp(pRestarts, propStep, func(h *head) *int64 { return &h.restarts }),
}
