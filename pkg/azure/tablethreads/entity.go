package tablethreads

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// Azure Table limits enforced here (Azurite accepts more).
const (
	maxEntityBytes   = 1 << 20 // 1 MiB per entity
	maxPropertyUnits = 32000   // UTF-16 units per string property (64 KiB holds 32 768)
	maxProperties    = 252
	warnFraction     = 0.9
)

// partitionKey is the hash bucket of a thread id.
func partitionKey(tid string) string {
	sum := sha256.Sum256([]byte(tid))
	return "t" + hex.EncodeToString(sum[:1])
}

// rowKey percent-encodes every byte but ASCII letters, digits and -_.~ (so / \ # ? ' and
// control characters never reach the service).
func rowKey(tid string) string {
	var sb strings.Builder
	for i := 0; i < len(tid); i++ {
		c := tid[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "%%%02X", c)
		}
	}
	return sb.String()
}

const timeLayout = "2006-01-02T15:04:05.0000000Z"

// encode renders t as an entity and returns its estimated size in bytes. JSON columns are
// stored ASCII-only (threads.StoredJSON: non-ASCII escaped as \uXXXX, as the platform bodies
// are written), which also keeps Azurite from splitting multi-byte characters in large bodies.
// v says where the values are: inline text, or the blob that holds them (values_ref); ix is
// the index bookkeeping (index.go).
func encode(t threads.Thread, v storedValues, ix ixState) ([]byte, int, error) {
	e := map[string]any{
		"PartitionKey": partitionKey(t.ThreadID), "RowKey": rowKey(t.ThreadID),
		"thread_id":  t.ThreadID,
		"created_at": t.CreatedAt.UTC().Format(timeLayout), "created_at@odata.type": "Edm.DateTime",
		"updated_at": t.UpdatedAt.UTC().Format(timeLayout), "updated_at@odata.type": "Edm.DateTime",
		"status": string(t.Status), "assistant_id": t.AssistantID, "interrupts_json": "{}",
		pVer: strconv.FormatInt(ix.ver, 10), pVer + "@odata.type": "Edm.Int64",
		pNonceAll: ix.all, pNonceStatus: ix.status, pNonceOwner: ix.owner,
	}
	meta, err := threads.MetadataJSON(t.Metadata)
	if err != nil {
		return nil, 0, err
	}
	putChunks(e, "metadata_json", string(meta))
	if v.ref != "" {
		e["values_ref"] = v.ref
	} else {
		putChunks(e, "values_json", v.inline)
	}
	size := 4
	for k, v := range e {
		if strings.HasSuffix(k, "@odata.type") {
			continue
		}
		s, _ := v.(string)
		size += 8 + 2*len(k) + 4 + 2*utf16Len(s)
	}
	if len(e) > maxProperties || size > maxEntityBytes {
		return nil, size, fmt.Errorf("encode thread %q (%d bytes): %w", t.ThreadID, size, threads.ErrTooLarge)
	}
	b, err := json.Marshal(e)
	return b, size, err
}

// putChunks stores s in name, name_1, name_2, ... each at most maxPropertyUnits UTF-16 units.
func putChunks(e map[string]any, name, s string) {
	for i := 0; ; i++ {
		key := name
		if i > 0 {
			key = fmt.Sprintf("%s_%d", name, i)
		}
		cut, units := 0, 0
		for j, r := range s {
			n := utf16.RuneLen(r)
			if n < 0 {
				n = 1
			}
			if units+n > maxPropertyUnits {
				break
			}
			units += n
			cut = j + len(string(r))
		}
		if cut == 0 && s != "" {
			cut = len(s)
		}
		e[key] = s[:cut]
		s = s[cut:]
		if s == "" {
			return
		}
	}
}

func getChunks(e map[string]any, name string) string {
	var sb strings.Builder
	for i := 0; ; i++ {
		key := name
		if i > 0 {
			key = fmt.Sprintf("%s_%d", name, i)
		}
		v, ok := e[key].(string)
		if !ok {
			return sb.String()
		}
		sb.WriteString(v)
	}
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// decode reads an entity back, the blob holding its values when they were spilled (then
// Values is nil until loaded), and its index bookkeeping (zero for an entity an earlier
// release wrote).
func decode(b []byte) (t threads.Thread, ref string, ix ixState, err error) {
	var e map[string]any
	if err := json.Unmarshal(b, &e); err != nil {
		return t, "", ix, fmt.Errorf("decode thread entity: %w", err)
	}
	str := func(k string) string { s, _ := e[k].(string); return s }
	ix = ixState{ver: int64Prop(e[pVer]), all: str(pNonceAll), status: str(pNonceStatus), owner: str(pNonceOwner)}
	t = threads.Thread{ThreadID: str("thread_id"), Status: threads.Status(str("status")), AssistantID: str("assistant_id")}
	if t.CreatedAt, err = time.Parse(time.RFC3339Nano, str("created_at")); err != nil {
		return t, "", ix, fmt.Errorf("decode created_at: %w", err)
	}
	if t.UpdatedAt, err = time.Parse(time.RFC3339Nano, str("updated_at")); err != nil {
		return t, "", ix, fmt.Errorf("decode updated_at: %w", err)
	}
	if meta := getChunks(e, "metadata_json"); meta != "null" && meta != "" {
		if err := json.Unmarshal([]byte(meta), &t.Metadata); err != nil {
			return t, "", ix, fmt.Errorf("decode metadata: %w", err)
		}
	}
	if values := getChunks(e, "values_json"); values != "null" && values != "" {
		t.Values = json.RawMessage(values)
	}
	return t, str("values_ref"), ix, nil
}
