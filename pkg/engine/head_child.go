package engine

// Head properties of child runs.
const (
	pParent, pParentNonce = "Parent", "ParentNonce" // a child's parent run
	pChildren, pChildDone = "Children", "ChildDone" // a parent's count, and its last completed child
)

// headChild is the part of the head that child runs keep (child.go): the parent of a child
// run (its id and nonce), the children a run started, and the child whose completion led to
// node ("" otherwise).
type headChild struct {
	parent, parentNonce string
	children            int64
	childDone           string
}

// headChildProps declares the properties of headChild. A child's start writes its parent;
// a step's merge writes the children it started and completed when they changed.
var headChildProps = []headProp{
	strProp(pParent, propStartedIfSet, func(h *head) *string { return &h.parent }),
	strProp(pParentNonce, propStartedIfSet, func(h *head) *string { return &h.parentNonce }).when(pParent),
	intProp(pChildren, propCompared, func(h *head) *int64 { return &h.children }),
	strProp(pChildDone, propCompared, func(h *head) *string { return &h.childDone }),
}
