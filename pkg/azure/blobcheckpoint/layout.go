package blobcheckpoint

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// Blob names of the layout. Every variable segment goes through checkpoint.Escape.

func threadPrefix(tid string) string { return "threads/" + checkpoint.Escape(tid) + "/" }

func nsPrefix(tid, ns string) string { return threadPrefix(tid) + "ns/" + checkpoint.Escape(ns) + "/" }

func checkpointsPrefix(tid, ns string) string { return nsPrefix(tid, ns) + "checkpoints/" }

func checkpointDir(tid, ns, id string) string {
	return checkpointsPrefix(tid, ns) + checkpoint.Escape(id) + "/"
}

func checkpointBlob(tid, ns, id string) string { return checkpointDir(tid, ns, id) + "checkpoint.bin" }

func metadataBlob(tid, ns, id string) string { return checkpointDir(tid, ns, id) + "metadata.bin" }

func writesPrefix(tid, ns, id string) string { return checkpointDir(tid, ns, id) + "writes/" }

func writeBlob(tid, ns, id, task string, idx int) string {
	return writesPrefix(tid, ns, id) + checkpoint.Escape(task) + "/" + strconv.Itoa(idx) + ".bin"
}

func valuesPrefix(tid, ns string) string { return nsPrefix(tid, ns) + "values/" }

func valueBlob(tid, ns, channel, version string) string {
	return valuesPrefix(tid, ns) + checkpoint.Escape(channel) + "/" + checkpoint.Escape(version) + ".bin"
}

func latestBlob(tid, ns string) string { return nsPrefix(tid, ns) + "latest.json" }

const committedSuffix = "/checkpoint.bin"

// committedID returns the checkpoint id of a name under checkpointsPrefix that is a
// checkpoint.bin.
func committedID(prefix, name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", false
	}
	seg, ok := strings.CutSuffix(rest, committedSuffix)
	if !ok || strings.Contains(seg, "/") {
		return "", false
	}
	id, err := url.PathUnescape(seg)
	return id, err == nil
}

// Blob metadata names.
const (
	metaSerdeType = "serde_type"
	metaParentID  = "parent_id"
	metaChannel   = "channel"
	metaTaskID    = "task_id"
	metaTaskPath  = "task_path"
)

// meta builds blob metadata from name/value pairs, escaping the values.
func meta(kv ...string) map[string]*string {
	m := make(map[string]*string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		v := checkpoint.Escape(kv[i+1])
		m[kv[i]] = &v
	}
	return m
}

// metaValue reads one metadata value by case-insensitive name (the SDK may canonicalise
// header names) and unescapes it.
func metaValue(m map[string]*string, name string) string {
	for k, v := range m {
		if strings.EqualFold(k, name) && v != nil {
			if s, err := url.PathUnescape(*v); err == nil {
				return s
			}
			return *v
		}
	}
	return ""
}
