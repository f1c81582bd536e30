package engine

import "unsafe"

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
	strProp(pParent, propStartedIfSet, unsafe.Offsetof(head{}.parent)),
	strProp(pParentNonce, propStartedIfSet, unsafe.Offsetof(head{}.parentNonce)).when(pParent),
	intProp(pChildren, propCompared, unsafe.Offsetof(head{}.children)),
	strProp(pChildDone, propCompared, unsafe.Offsetof(head{}.childDone)),
}
