package engine

// pSearchKeys is the property of the head, the index rows and a start's due row that holds the
// run's search keys (searchKeysJSON, searchkeys.go).
const pSearchKeys = "SearchKeys"

// headKeys is the part of the head that search keys keep: the run's keys as its index rows
// carry them (searchKeysJSON), "" for none.
type headKeys struct {
	searchKeys string
}

// headKeysProps declares the properties of headKeys: written by a start that has keys.
var headKeysProps = []headProp{
	strProp(pSearchKeys, propStartedIfSet, func(h *head) *string { return &h.searchKeys }),
}
