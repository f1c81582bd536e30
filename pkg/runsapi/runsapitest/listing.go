package runsapitest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// As sends one request as an identity through a transport; "" sends the master key and no
// identity.
type As func(t *testing.T, identity, method, path, body string) Response

// NoRuns is the exact body of a listing that holds nothing and leads nowhere.
const NoRuns = `{"runs": [], "continuation_token": null}`

// BadToken is the exact body that refuses a continuation token the service did not issue.
const BadToken = `{"error": "invalid query parameter 'continuation_token': want the token of a previous page, or none to start over"}`

// listPage is one decoded page of GET /api/runs.
type listPage struct {
	Runs []struct {
		InstanceID string `json:"instance_id"`
	} `json:"runs"`
	Token *string `json:"continuation_token"`
}

func decodePage(t *testing.T, what string, r Response) listPage {
	t.Helper()
	var p listPage
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &p) != nil {
		t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
	return p
}

// pageAll follows a listing's tokens as identity and returns the ids in order and the pages.
func pageAll(t *testing.T, as As, identity, query string) (ids []string, pages []listPage) {
	t.Helper()
	path := "/api/runs?" + query
	for range 200 {
		p := decodePage(t, identity+" GET "+path, as(t, identity, "GET", path, ""))
		pages = append(pages, p)
		for _, r := range p.Runs {
			ids = append(ids, r.InstanceID)
		}
		if p.Token == nil {
			return ids, pages
		}
		path = "/api/runs?" + query + "&continuation_token=" + *p.Token
	}
	t.Fatalf("%s: the listing %s did not end", identity, query)
	return nil, nil
}

// CheckScopedListings checks GET /api/runs under per-user isolation through tr: among runs
// other identities and the master key started (support_agent runs, which wait for an event,
// and data_pipeline runs), an identity without runs gets NoRuns for every filter and page
// size, never a token or a count of anybody else's; the owner pages with limit=1 through
// exactly their runs, newest first, one a page, the last page without a token; a filtered
// listing pages the owner's matching runs; another identity lists none of them and the master
// key all. A token is good for the listing it came from only: the owner's is refused to
// another identity, and one minted without the service's key — an unkeyed
// checksum, a wrong MAC, random bytes — is refused with BadToken. Identities and run ids are
// unique per transport, so both transports may share one app.
func CheckScopedListings(t *testing.T, tr funchosttest.Transport, as As) {
	t.Helper()
	owner, other, nobody := UniqueID(tr, "lister"), UniqueID(tr, "other-lister"), UniqueID(tr, "no-runs")
	start := func(who, graph, id, input string) {
		t.Helper()
		r := as(t, who, "POST", "/api/graphs/"+graph+"/runs", fmt.Sprintf(`{"instance_id": %q, "input": %s}`, id, input))
		r.Expect(t, who+" start "+id, 202, "")
	}
	const support, pipeline = `{"user_message": "I want a refund"}`, `{"source_url": "https://example.com/data"}`
	var mine, mineSupport, everyone []string // in start order
	for i := range 12 {
		id := UniqueID(tr, fmt.Sprintf("scoped-other-%02d", i))
		start(other, "support_agent", id, support)
		everyone = append(everyone, id)
		if i%3 == 0 {
			id := UniqueID(tr, fmt.Sprintf("scoped-mine-%02d", i))
			start(owner, "support_agent", id, support)
			mine, mineSupport, everyone = append(mine, id), append(mineSupport, id), append(everyone, id)
		}
		if i%4 == 1 {
			id := UniqueID(tr, fmt.Sprintf("scoped-admin-%02d", i))
			start("", "support_agent", id, support)
			everyone = append(everyone, id)
		}
	}
	for i := range 2 {
		id := UniqueID(tr, fmt.Sprintf("scoped-mine-pipeline-%d", i))
		start(owner, "data_pipeline", id, pipeline)
		mine, everyone = append(mine, id), append(everyone, id)
	}
	slices.Reverse(mine) // listings are newest first
	slices.Reverse(mineSupport)

	for _, q := range []string{"", "?limit=1", "?limit=1&runtime_status=Running&graph_name=support_agent",
		"?limit=1&graph_name=support_agent", "?limit=1&status=Completed", "?limit=1000"} {
		as(t, nobody, "GET", "/api/runs"+q, "").Expect(t, "an identity without runs lists "+q, 200, NoRuns)
	}

	ids, pages := pageAll(t, as, owner, "limit=1")
	if !slices.Equal(ids, mine) {
		t.Fatalf("the owner pages through\n %v\nwant their runs, newest first\n %v", ids, mine)
	}
	if len(pages) != len(mine) {
		t.Errorf("the owner's %d runs took %d pages of one, want one each and no empty last page", len(mine), len(pages))
	}
	if ids, _ := pageAll(t, as, owner, "limit=2&graph_name=support_agent"); !slices.Equal(ids, mineSupport) {
		t.Errorf("the owner's support_agent runs: %v, want %v", ids, mineSupport)
	}
	if ids, _ := pageAll(t, as, other, "limit=1000"); slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(mine, id) }) {
		t.Errorf("another identity lists the owner's runs: %v", ids)
	}
	all, _ := pageAll(t, as, "", "limit=1000")
	for _, id := range everyone {
		if !slices.Contains(all, id) {
			t.Errorf("the master key does not list %s", id)
		}
	}

	// Tokens: the owner's first page's is good for the owner only.
	first := pages[0].Token
	if first == nil {
		t.Fatal("the owner's first page of one carries no token")
	}
	as(t, owner, "GET", "/api/runs?limit=1&continuation_token="+*first, "").Expect(t, "the owner's token, again", 200, "")
	as(t, other, "GET", "/api/runs?limit=1&continuation_token="+*first, "").Expect(t, "the owner's token sent by another identity", 400, BadToken)
	raw, err := base64.RawURLEncoding.DecodeString(*first)
	if err != nil || len(raw) < 18 {
		t.Fatalf("token %q: %v", *first, err)
	}
	inner := raw[17:] // after the version byte and the 16-byte MAC
	unkeyed := sha256.Sum256(append([]byte("funcgraph runs api continuation token v1\x00"), inner...))
	random := make([]byte, 40)
	_, _ = rand.Read(random)
	for what, tok := range map[string][]byte{
		"an earlier release's unkeyed checksum": append(unkeyed[:8:8], inner...),
		"a wrong MAC":                           append(append([]byte{raw[0]}, make([]byte, 16)...), inner...),
		"random bytes":                          random,
	} {
		path := "/api/runs?limit=1&continuation_token=" + base64.RawURLEncoding.EncodeToString(tok)
		as(t, owner, "GET", path, "").Expect(t, "a token minted with "+what, 400, BadToken)
	}
}
