package azsdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

func answer(status int, code string) error {
	return fmt.Errorf("call: %w", &azcore.ResponseError{StatusCode: status, ErrorCode: code})
}

func TestClassify_CodesThenStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		code   string
		want   Kind
	}{
		{404, "EntityNotFound", NotFound},
		{404, "ResourceNotFound", NotFound},
		{404, "BlobNotFound", NotFound},
		{404, "MessageNotFound", NotFound},
		{400, "PopReceiptMismatch", NotFound},
		{404, "", NotFound},
		{404, "TableNotFound", ParentNotFound},
		{404, "ContainerNotFound", ParentNotFound},
		{404, "QueueNotFound", ParentNotFound},
		{404, "SomethingElse", Unclassified},
		{409, "EntityAlreadyExists", AlreadyExists},
		{409, "TableAlreadyExists", AlreadyExists},
		{409, "BlobAlreadyExists", AlreadyExists},
		{409, "containeralreadyexists", AlreadyExists},
		{409, "QueueAlreadyExists", AlreadyExists},
		{412, "UpdateConditionNotSatisfied", PreconditionFailed},
		{412, "ConditionNotMet", PreconditionFailed},
		{412, "", PreconditionFailed},
		{409, "LeaseLost", LeaseLost},
		{409, "leaseidmismatchwithleaseoperation", LeaseLost},
		{409, "LeaseNotPresentWithLeaseOperation", LeaseLost},
		{412, "LeaseIdMissing", LeaseLost},
		{409, "LeaseAlreadyPresent", Conflict},
		{409, "TableBeingDeleted", Conflict},
		{400, "EntityTooLarge", TooLarge},
		{400, "PropertyValueTooLarge", TooLarge},
		{400, "TooManyProperties", TooLarge},
		{413, "RequestBodyTooLarge", TooLarge},
		{400, "MessageTooLarge", TooLarge},
		{413, "", TooLarge},
		{400, "InvalidInput", BadRequest},
		{503, "ServerBusy", Throttled},
		{429, "", Throttled},
		{500, "InternalError", Transient},
		{504, "", Transient},
		{403, "AuthorizationFailure", PermissionDenied},
		{403, "AuthorizationPermissionMismatch", PermissionDenied},
		{403, "authorizationpermissionmismatch", PermissionDenied},
		{403, "AuthenticationFailed", Unclassified},
		{403, "", Unclassified},
	}
	for _, tt := range tests {
		got := Classify(answer(tt.status, tt.code))
		if got != (Answer{Status: tt.status, Code: tt.code, Kind: tt.want}) {
			t.Errorf("Classify(%d %s) = %+v, want kind %d", tt.status, tt.code, got, tt.want)
		}
	}
	if got := Classify(errors.New("dial tcp: refused")); got != (Answer{}) {
		t.Errorf("Classify(transport error) = %+v, want the zero Answer", got)
	}
}

func TestReduce_NoURLNoMessage(t *testing.T) {
	t.Parallel()
	const sas = "sig=c2VjcmV0"
	sentinel := errors.New("not found")
	mapKind := func(k Kind) error {
		if k == NotFound {
			return sentinel
		}
		return nil
	}
	svc := &azcore.ResponseError{StatusCode: 404, ErrorCode: "BlobNotFound",
		RawResponse: &http.Response{StatusCode: 404, Request: &http.Request{Method: "GET", URL: &url.URL{Scheme: "https", Host: "a.blob.core.windows.net", RawQuery: sas}}}}
	err := Reduce("blob", fmt.Errorf("get: %w", svc), mapKind)
	if !errors.Is(err, sentinel) || err.Error() != "blob service answered 404 BlobNotFound: not found" {
		t.Errorf("Reduce(service error) = %v", err)
	}
	if err := Reduce("blob", answer(409, "BlobAlreadyExists"), mapKind); errors.Is(err, sentinel) || err.Error() != "blob service answered 409 BlobAlreadyExists" {
		t.Errorf("Reduce(unmapped) = %v", err)
	}
	transport := &url.Error{Op: "Get", URL: "https://a.blob.core.windows.net/c?" + sas, Err: context.DeadlineExceeded}
	err = Reduce("blob", transport, mapKind)
	if strings.Contains(err.Error(), sas) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Reduce(transport error) = %v", err)
	}
	if Reduce("blob", nil, mapKind) != nil {
		t.Error("Reduce(nil) != nil")
	}
	plain := errors.New("plain")
	if Reduce("blob", plain, nil) != plain {
		t.Error("Reduce changed a non-SDK error")
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{answer(409, "LeaseAlreadyPresent"), "status=409 code=LeaseAlreadyPresent"},
		{fmt.Errorf("renew: %w", context.DeadlineExceeded), "timeout"},
		{context.Canceled, "canceled"},
		{&url.Error{Op: "Put", URL: "https://x?sig=secret", Err: errors.New("refused")}, "transport error (*url.Error)"},
	}
	for _, tt := range tests {
		if got := Summary(tt.err); got != tt.want {
			t.Errorf("Summary(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
