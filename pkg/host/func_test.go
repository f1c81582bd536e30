package host

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

type orderIn struct {
	Item  string `json:"item"`
	Count int    `json:"count"`
}

type orderOut struct {
	Accepted string `json:"accepted"`
}

var errSecretCause = errors.New("secret cause text")

func order(ctx context.Context, in orderIn) (orderOut, error) {
	switch in.Item {
	case "gone":
		return orderOut{}, &ClientError{Status: http.StatusNotFound, Message: "No such item", Err: errSecretCause}
	case "busy":
		return orderOut{}, &ClientError{Status: http.StatusConflict, Message: "Item is being restocked"}
	case "weird":
		return orderOut{}, &ClientError{Status: 503, Message: "Not a client status"}
	case "fail":
		return orderOut{}, errSecretCause
	}
	req, _ := RequestFrom(ctx)
	return orderOut{Accepted: in.Item + "@" + req.Config.ThreadID}, nil
}

type streamOrder struct{ Func[orderIn, orderOut] }

func (streamOrder) Stream(ctx context.Context, req Request, emit func(any) error) error {
	return &ClientError{Status: http.StatusTooManyRequests, Message: "Slow down"}
}

func TestFunc_TypedInputAndClientErrors_BothTransports(t *testing.T) {
	t.Parallel()
	app := testApp(t, Options{}, map[string]InvocableGraph{
		"order":  Func[orderIn, orderOut](order),
		"stream": streamOrder{Func[orderIn, orderOut](order)},
	}, nil)
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"decoded", "/api/graphs/order/invoke", `{"input":{"item":"tea","count":2},"config":{"configurable":{"thread_id":"t9"}}}`, 200, `{"output":{"accepted":"tea@t9"}}`},
		{"decode failure is 422", "/api/graphs/order/invoke", `{"input":{"item":"tea","count":"two"}}`, 422, errBody("Validation error: input.count: Input should be a valid integer, got string")},
		{"client error 404", "/api/graphs/order/invoke", `{"input":{"item":"gone"}}`, 404, errBody("No such item")},
		{"client error 409", "/api/graphs/order/invoke", `{"input":{"item":"busy"}}`, 409, errBody("Item is being restocked")},
		{"non-4xx status is 400", "/api/graphs/order/invoke", `{"input":{"item":"weird"}}`, 400, errBody("Not a client status")},
		{"other error is 500", "/api/graphs/order/invoke", `{"input":{"item":"fail"}}`, 500, errBody("Graph execution failed")},
		{"stream client error", "/api/graphs/stream/stream", `{"input":{}}`, 429, errBody("Slow down")},
	}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		for _, tt := range tests {
			t.Run(tr.Name+"/"+tt.name, func(t *testing.T) {
				got := call(t, tr, http.MethodPost, tt.path, tt.body, tr.FunctionKey)
				if got.status != tt.status || got.body != tt.want {
					t.Fatalf("got %d %s, want %d %s", got.status, got.body, tt.status, tt.want)
				}
			})
		}
	}
}
