package engine

// Head properties of child runs.
const (
	pParent, pParentNonce = "Parent", "ParentNonce" // a child's parent run
	pChildren, pChildDone = "Children", "ChildDone" // a parent's count, and its last completed child
	// A run's place in its family (child.go): its depth, its root and the family's runs it
	// knows of.
	pDepth, pRoot, pFamily = "Depth", "Root", "Family"
)

// headChild is the part of the head that child runs keep (child.go): the parent of a child
// run (its id and nonce), the children a run started, the child whose completion led to
// node ("" otherwise), and the run's place in its family.
type headChild struct {
	parent, parentNonce string
	children            int64
	childDone           string
	// depth is the run's depth in its family (0: the root, a run started directly), root the
	// family's root run ("" on the root itself), family how many of the family's runs had
	// started as far as the run knows (0 on a root that started none: itself).
	depth  int64
	root   string
	family int64
}

// headChildProps declares the properties of headChild. A child's start writes its parent and
// its place in the family; a step's merge writes the children it started and completed, and
// the family's count it learnt from a child, when they changed.
var headChildProps = []headProp{
	strProp(pParent, propStartedIfSet, func(h *head) *string { return &h.parent }),
	strProp(pParentNonce, propStartedIfSet, func(h *head) *string { return &h.parentNonce }).when(pParent),
	intProp(pChildren, propCompared, func(h *head) *int64 { return &h.children }),
	strProp(pChildDone, propCompared, func(h *head) *string { return &h.childDone }),
	intProp(pDepth, propStartedIfSet, func(h *head) *int64 { return &h.depth }),
	strProp(pRoot, propStartedIfSet, func(h *head) *string { return &h.root }),
	intProp(pFamily, propStartedIfSet|propCompared, func(h *head) *int64 { return &h.family }),
}
