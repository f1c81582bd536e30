package runsclient

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// Rewind continues a Failed run from the step that failed, its history kept and the rewind
// recorded in it (reason: "" for none). It returns the run's status as the app answered it.
// Errors: ErrNotFound, ErrConflict for a run that is not Failed (the *Error's RuntimeStatus
// names its status). A rewind whose answer was lost is an *UnknownOutcomeError: Status tells
// whether the run is running again.
func (c *Client) Rewind(ctx context.Context, instanceID, reason string) (*RunStatus, error) {
	var body []byte
	if reason != "" {
		var err error
		if body, err = jsonBody(map[string]string{"reason": reason}); err != nil {
			return nil, err
		}
	}
	var out RunStatus
	if _, err := c.do(ctx, &request{method: http.MethodPost, path: "/runs/" + seg(instanceID) + "/rewind", body: body}, http.StatusAccepted, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RewindFilter selects the runs RewindRuns rewinds: those that failed from FailedAfter
// (required) on, before FailedBefore (zero: no bound), of GraphName ("" any graph).
type RewindFilter struct {
	GraphName    string
	FailedAfter  time.Time
	FailedBefore time.Time
	// Limit bounds the runs one call rewinds (1–100; 0 means the app's default, 100).
	Limit int
	// Reason is recorded in each rewound run's history.
	Reason string
	// ContinuationToken continues from a previous call.
	ContinuationToken string
}

// RewindPage is what one RewindRuns call rewound.
type RewindPage struct {
	// Rewound are the instance ids this call rewound.
	Rewound []string
	// ContinuationToken continues with the filter's next runs ("" when done).
	ContinuationToken string
}

// rewindBody is the body of POST /runs/rewind.
type rewindBody struct {
	GraphName         string `json:"graph_name,omitempty"`
	FailedAfter       string `json:"failed_after"`
	FailedBefore      string `json:"failed_before,omitempty"`
	Limit             int    `json:"limit,omitempty"`
	Reason            string `json:"reason,omitempty"`
	ContinuationToken string `json:"continuation_token,omitempty"`
}

// RewindRuns rewinds, bounded per call, the runs that failed in a window (after an outage),
// each at most once per failure. Call it again with the page's token until it has none, or
// use RewindAll. Errors: ErrBadRequest for a filter the app refuses. A call whose answer was
// lost is an *UnknownOutcomeError; calling again with the same filter and token is safe
// (a run already rewound is not rewound again).
func (c *Client) RewindRuns(ctx context.Context, f RewindFilter) (*RewindPage, error) {
	b := rewindBody{GraphName: f.GraphName, FailedAfter: rfc3339(f.FailedAfter), Limit: f.Limit, Reason: f.Reason, ContinuationToken: f.ContinuationToken}
	if !f.FailedBefore.IsZero() {
		b.FailedBefore = rfc3339(f.FailedBefore)
	}
	body, err := jsonBody(b)
	if err != nil {
		return nil, err
	}
	var out struct {
		Rewound           []string `json:"rewound"`
		ContinuationToken *string  `json:"continuation_token"`
	}
	if _, err := c.do(ctx, &request{method: http.MethodPost, path: "/runs/rewind", body: body}, http.StatusOK, &out); err != nil {
		return nil, err
	}
	p := &RewindPage{Rewound: out.Rewound}
	if out.ContinuationToken != nil {
		p.ContinuationToken = *out.ContinuationToken
	}
	return p, nil
}

// RewindAll calls RewindRuns until the filter is done, yielding each page, or the first
// error, which it yields and stops after.
func (c *Client) RewindAll(ctx context.Context, f RewindFilter) iter.Seq2[*RewindPage, error] {
	return func(yield func(*RewindPage, error) bool) {
		for {
			p, err := c.RewindRuns(ctx, f)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(p, nil) || p.ContinuationToken == "" {
				return
			}
			f.ContinuationToken = p.ContinuationToken
		}
	}
}

// rfc3339 writes t in UTC RFC 3339 ("" for the zero time, which the app refuses for
// failed_after).
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
