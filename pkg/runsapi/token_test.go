package runsapi_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// instanceOver serves the runs API of a started engine over store, queue and payloads, as one
// instance of an app among others on the same storage.
func instanceOver(t *testing.T, store *memory.Store, queue *memory.Queue, payloads *memory.PayloadStore) []funchosttest.Transport {
	t.Helper()
	_, trs := serveRunsWith(t, engine.Options{Registry: runsapitest.Registry(t, examples.All), Store: store, Queue: queue, Payloads: payloads},
		runsapi.Options{AuthLevel: "function"})
	return trs
}

// tokenOf returns the continuation token of a 200 page, failing the test without one.
func tokenOf(t *testing.T, what string, r runsapitest.Response) string {
	t.Helper()
	var tok string
	if r.Status != 200 || json.Unmarshal(r.Field(t, "continuation_token"), &tok) != nil || tok == "" {
		t.Fatalf("%s: %d %s, want a page with a token", what, r.Status, r.Body)
	}
	return tok
}

// forgeries returns tokens minted without the service's key around the engine token inside
// tok: an earlier release's unkeyed checksum, a wrong MAC, and bytes that are no token.
func forgeries(t *testing.T, tok string) map[string]string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) < 18 {
		t.Fatalf("token %q: %v", tok, err)
	}
	inner := raw[17:] // after the version byte and the 16-byte MAC
	unkeyed := sha256.Sum256(append([]byte("funcgraph runs api continuation token v1\x00"), inner...))
	enc := base64.RawURLEncoding.EncodeToString
	return map[string]string{
		"an earlier release's unkeyed checksum": enc(append(unkeyed[:8:8], inner...)),
		"a wrong MAC":                           enc(append(append([]byte{raw[0]}, make([]byte, 16)...), inner...)),
		"another version":                       enc(append([]byte{raw[0] + 1}, raw[1:]...)),
		"the engine's own token":                string(inner),
		"junk":                                  "bm90IGEgdG9rZW4",
	}
}

// TestToken_SharedByTheFleet_MintedOnesRefused_BothTransports: two instances over one store
// sign tokens with the one key the store holds, so a page one issued continues on the other;
// an instance over other storage, and a token minted without the key, get a 400 that says to
// start over — for listings and histories alike, and a history's token is good for its own
// run only.
func TestToken_SharedByTheFleet_MintedOnesRefused_BothTransports(t *testing.T) {
	store, queue, payloads := memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore()
	first, second := instanceOver(t, store, queue, payloads), instanceOver(t, store, queue, payloads)
	elsewhere := instanceOver(t, memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore())
	for i, tr := range first {
		t.Run(tr.Name, func(t *testing.T) {
			call := func(tr funchosttest.Transport, path string) runsapitest.Response {
				return runsapitest.Call(t, tr, "GET", path, "", "x-functions-key", tr.FunctionKey)
			}
			a, b := runsapitest.UniqueID(tr, "token-a"), runsapitest.UniqueID(tr, "token-b")
			for _, id := range []string{a, b} {
				runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/runs", `{"instance_id": "`+id+`", "input": {"source_url": "https://example.com/data"}}`,
					"x-functions-key", tr.FunctionKey).Expect(t, "start "+id, 202, "")
			}
			list := tokenOf(t, "first page", call(tr, "/api/runs?limit=1"))
			call(second[i], "/api/runs?limit=1&continuation_token="+list).Expect(t, "the next page on another instance", 200, "")
			call(elsewhere[i], "/api/runs?limit=1&continuation_token="+list).Expect(t, "a token of another store", 400, runsapitest.BadToken)
			history := tokenOf(t, "history", call(tr, "/api/runs/"+a+"/history?limit=1"))
			call(second[i], "/api/runs/"+a+"/history?limit=1&continuation_token="+history).Expect(t, "history on another instance", 200, "")
			call(tr, "/api/runs/"+b+"/history?limit=1&continuation_token="+history).Expect(t, "a history token on another run", 400, runsapitest.BadToken)
			for what, tok := range forgeries(t, list) {
				call(tr, "/api/runs?limit=1&continuation_token="+tok).Expect(t, "list with "+what, 400, runsapitest.BadToken)
			}
			for what, tok := range forgeries(t, history) {
				call(tr, "/api/runs/"+a+"/history?limit=1&continuation_token="+tok).Expect(t, "history with "+what, 400, runsapitest.BadToken)
			}
		})
	}
}
