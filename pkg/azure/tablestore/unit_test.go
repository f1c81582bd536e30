package tablestore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// batchReply builds a reply shaped like the service's: one changeset of HTTP responses.
func batchReply(parts ...string) (contentType string, body []byte) {
	var b strings.Builder
	b.WriteString("--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_2\r\n\r\n")
	for _, p := range parts {
		b.WriteString("--changesetresponse_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(p)
		b.WriteString("\r\n")
	}
	b.WriteString("--changesetresponse_2--\r\n--batchresponse_1--\r\n")
	return "multipart/mixed; boundary=batchresponse_1", []byte(b.String())
}

func TestParseBatchReply_ETagsAndFailures(t *testing.T) {
	t.Parallel()
	ok := func(etag string) string {
		return "HTTP/1.1 204 No Content\r\nDataServiceVersion: 3.0;\r\nETag: " + etag + "\r\n\r\n"
	}
	tests := []struct {
		name  string
		parts []string
		want  []subResponse
	}{
		{"etags in order", []string{ok(`W/"datetime'1'"`), "HTTP/1.1 204 No Content\r\n\r\n", ok(`W/"datetime'3'"`)},
			[]subResponse{{204, `W/"datetime'1'"`, "", -1}, {204, "", "", -1}, {204, `W/"datetime'3'"`, "", -1}}},
		{"failure with index in message", []string{"HTTP/1.1 412 Precondition Failed\r\nContent-ID: 2\r\nContent-Type: application/json\r\n\r\n" +
			`{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","value":"1:The update condition"}}}`},
			[]subResponse{{412, "", "UpdateConditionNotSatisfied", 1}}},
		{"failure with Content-ID only", []string{"HTTP/1.1 409 Conflict\r\nContent-ID: 3\r\n\r\n" + `{"odata.error":{"code":"EntityAlreadyExists","message":{"value":"exists"}}}`},
			[]subResponse{{409, "", "EntityAlreadyExists", 2}}},
	}
	for _, tt := range tests {
		ct, body := batchReply(tt.parts...)
		got, err := parseBatchReply(ct, body)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
		// Without the header the boundary comes from the body.
		if again, err := parseBatchReply("", body); err != nil || fmt.Sprint(again) != fmt.Sprint(got) {
			t.Errorf("%s: without Content-Type: %+v, %v", tt.name, again, err)
		}
	}
	if _, err := parseBatchReply("application/json", []byte(`{"odata.error":{}}`)); err == nil {
		t.Error("a JSON body parsed as a batch reply")
	}
}

func FuzzParseBatchReply(f *testing.F) {
	ct, body := batchReply("HTTP/1.1 204 No Content\r\nETag: x\r\n\r\n")
	f.Add(ct, body)
	f.Add("", []byte("--a\r\n\r\n--a--"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		subs, err := parseBatchReply(ct, body)
		if err == nil {
			for _, s := range subs {
				if s.index < -1 {
					t.Fatalf("index %d", s.index)
				}
			}
		}
	})
}

func FuzzDecodeToken(f *testing.F) {
	f.Add(encodeToken("1!8!cGsx", "1!8!cms1"))
	f.Add("")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, tok string) {
		pk, rk, err := decodeToken(tok)
		if err != nil {
			if !errors.Is(err, engine.ErrInvalidQuery) {
				t.Fatalf("error %v does not wrap ErrInvalidQuery", err)
			}
			return
		}
		if encodeToken(pk, rk) != strings.TrimRight(tok, "=") && pk != "" {
			if p2, r2, _ := decodeToken(encodeToken(pk, rk)); p2 != pk || r2 != rk {
				t.Fatalf("token does not round-trip: %q", tok)
			}
		}
	})
}

func TestBuildFilter_OData(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	tests := []struct {
		q    engine.Query
		want string
	}{
		{engine.Query{PartitionKey: "run'1", RowKeyFrom: "h", RowKeyTo: "i"}, "PartitionKey eq 'run''1' and RowKey ge 'h' and RowKey lt 'i'"},
		{engine.Query{Where: []engine.Cond{{Property: "N", Op: engine.CondNe, Value: int64(-3)}}}, "(N lt -3L or N gt -3L)"},
		{engine.Query{Where: []engine.Cond{{Property: "N", Op: engine.CondGe, Value: int32(3)}}}, "N ge 3"},
		{engine.Query{Where: []engine.Cond{{Property: "F", Op: engine.CondLt, Value: 2.0}}}, "F lt 2.0"},
		{engine.Query{Where: []engine.Cond{{Property: "At", Op: engine.CondGt, Value: when}}}, "At gt datetime'2026-01-02T03:04:05.0000006Z'"},
		{engine.Query{Where: []engine.Cond{{Property: "B", Op: engine.CondEq, Value: []byte{0xab, 1}}, {Property: "Ok", Op: engine.CondEq, Value: true}}}, "B eq X'ab01' and Ok eq true"},
	}
	for _, tt := range tests {
		got, never, err := buildFilter(tt.q)
		if err != nil || never || got != tt.want {
			t.Errorf("buildFilter(%+v) = %q, %v, %v; want %q", tt.q, got, never, err, tt.want)
		}
	}
	if _, never, _ := buildFilter(engine.Query{Where: []engine.Cond{{Property: "RowKey", Op: engine.CondEq, Value: int64(1)}}}); !never {
		t.Error("a row key compared with a number should match nothing")
	}
}

func TestStore_CheckPartitionKey(t *testing.T) {
	s := New(nil)
	if err := s.CheckPartitionKey("run-1"); err != nil {
		t.Errorf("plain key: %v", err)
	}
	if err := s.CheckPartitionKey("it's"); !errors.Is(err, engine.ErrInvalidEntity) {
		t.Errorf("quoted key: %v, want ErrInvalidEntity", err)
	}
}
