package azsdk

import (
	"errors"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
)

// Kind is what a storage service's answer means, whichever service gave it.
type Kind int

// The kinds of answer. A service error code the table below names decides the kind; an
// unnamed code falls back to its HTTP status.
const (
	// Unclassified is any other answer, and every error that is not a service answer.
	Unclassified Kind = iota
	// NotFound: the entity, blob or message is missing, or a queue message's pop receipt is
	// stale (the message is no longer the caller's). A 404 without an error code too.
	NotFound
	// ParentNotFound: the table, container or queue itself is missing (a deployment
	// problem, not a missing item).
	ParentNotFound
	// AlreadyExists: a create-only write found the entity, blob, table, container or queue.
	AlreadyExists
	// PreconditionFailed: an If-Match or If-None-Match condition failed (any 412).
	PreconditionFailed
	// Conflict: any other 409.
	Conflict
	// LeaseLost: the blob lease named in the request is not the caller's (lost, another
	// lease id, none present, or none given).
	LeaseLost
	// TooLarge: an entity, property, message or request body over a service limit (any 413).
	TooLarge
	// BadRequest: any other 400.
	BadRequest
	// Throttled: the service asks the caller to slow down (429, 503 ServerBusy).
	Throttled
	// Transient: a server-side failure worth retrying (408, 500, 502, 504).
	Transient
	// PermissionDenied: the service authenticated the caller and refused the operation (403
	// AuthorizationPermissionMismatch: a token whose identity has no role granting it, or a
	// SAS without the permission; 403 AuthorizationFailure: not authorized, e.g. by the
	// account's network rules). A 403 with another code (a bad key or token) is Unclassified.
	PermissionDenied
)

// codeKinds maps lowercased service error codes to their kind. Codes are compared without
// regard to case: the lock's rules say so, and no two codes differ
// only in case.
var codeKinds = func() map[string]Kind {
	m := map[string]Kind{}
	add := func(k Kind, codes ...string) {
		for _, c := range codes {
			m[strings.ToLower(c)] = k
		}
	}
	add(NotFound, string(aztables.EntityNotFound), string(aztables.ResourceNotFound),
		string(bloberror.BlobNotFound), string(queueerror.MessageNotFound), string(queueerror.PopReceiptMismatch))
	add(ParentNotFound, string(aztables.TableNotFound), string(bloberror.ContainerNotFound), string(queueerror.QueueNotFound))
	add(AlreadyExists, string(aztables.EntityAlreadyExists), string(aztables.TableAlreadyExists),
		string(bloberror.BlobAlreadyExists), string(bloberror.ContainerAlreadyExists), string(queueerror.QueueAlreadyExists))
	add(PreconditionFailed, string(aztables.UpdateConditionNotSatisfied), string(bloberror.ConditionNotMet))
	add(LeaseLost, string(bloberror.LeaseLost), string(bloberror.LeaseIDMismatchWithLeaseOperation),
		string(bloberror.LeaseNotPresentWithLeaseOperation), string(bloberror.LeaseIDMissing))
	add(TooLarge, string(aztables.EntityTooLarge), string(aztables.PropertyValueTooLarge), string(aztables.TooManyProperties),
		string(bloberror.RequestBodyTooLarge), string(queueerror.RequestBodyTooLarge), string(queueerror.MessageTooLarge))
	add(Throttled, string(bloberror.ServerBusy), string(queueerror.ServerBusy))
	add(PermissionDenied, string(bloberror.AuthorizationPermissionMismatch), string(bloberror.AuthorizationFailure))
	return m
}()

// kindOf classifies one answer by its error code, else by its status. A 404 whose code no
// rule names stays Unclassified (a table's TableNotFound is named; an unknown code is not
// evidence that the item is missing).
func kindOf(status int, code string) Kind {
	if k, ok := codeKinds[strings.ToLower(code)]; ok {
		return k
	}
	switch status {
	case http.StatusNotFound:
		if code == "" {
			return NotFound
		}
	case http.StatusConflict:
		return Conflict
	case http.StatusPreconditionFailed:
		return PreconditionFailed
	case http.StatusRequestEntityTooLarge:
		return TooLarge
	case http.StatusBadRequest:
		return BadRequest
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return Throttled
	case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return Transient
	}
	return Unclassified
}

// Answer is a storage service's answer to one request: its HTTP status, error code and
// kind. The zero Answer (Status 0) stands for an error that is not a service answer
// (transport failure, cancellation, an SDK argument check).
type Answer struct {
	Status int
	Code   string
	Kind   Kind
}

// Classify returns the answer an SDK error carries (an *azcore.ResponseError anywhere in its
// chain), or the zero Answer.
func Classify(err error) Answer {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return Answer{}
	}
	return Answer{Status: re.StatusCode, Code: re.ErrorCode, Kind: kindOf(re.StatusCode, re.ErrorCode)}
}
