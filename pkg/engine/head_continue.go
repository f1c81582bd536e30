package engine

// Head properties of continue-as-new (continue.go).
const (
	// pContinued counts the run's continues as new: its generation, 0 for the first.
	pContinued = "Continued"
	// pContinuedSeq is the sequence number of the current generation's first history row
	// (its continued_as_new row); 0 for the first generation, whose rows begin at 1.
	pContinuedSeq = "ContinuedSeq"
	// pPrevContinuedSeq is the first sequence number of the generation before the current
	// one: the rows from it up to ContinuedSeq are the history that generation ended with.
	pPrevContinuedSeq = "PrevContinuedSeq"
)

// headContinue is the part of the head that continue-as-new keeps: the run's generation and
// where the history of the current and the previous generation begin. A start writes none
// of them (a new run is generation 0; a start that replaces a finished run replaces the row,
// so the count starts again); a continue-as-new commit writes all three.
type headContinue struct {
	continued, continuedSeq, prevContinuedSeq int64
}

// headContinueProps declares the properties of headContinue: a step's merge writes them when
// they changed.
var headContinueProps = []headProp{
	intProp(pContinued, propCompared, func(h *head) *int64 { return &h.continued }),
	intProp(pContinuedSeq, propCompared, func(h *head) *int64 { return &h.continuedSeq }),
	intProp(pPrevContinuedSeq, propCompared, func(h *head) *int64 { return &h.prevContinuedSeq }),
}

// generationStart returns the first sequence number of the current generation's history.
func (h *head) generationStart() int64 { return max(h.continuedSeq, 1) }
