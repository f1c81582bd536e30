package procmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// statusMB reads a memory field of /proc/<pid>/status (VmRSS, VmHWM) in MB (10^6 bytes), or -1
// when it cannot be read.
func statusMB(pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb * 1024 / 1e6
			}
		}
	}
	return -1
}

// gcLine matches a gctrace line's heap sizes: "… 4->5->2 MB, 5 MB goal …".
var gcLine = regexp.MustCompile(`gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

// lastLiveHeapMB returns the live heap after the last GC traced in log (the third figure of
// the trace's "A->B->C MB", MiB) in MB, with the trace line; ok is false when log has none.
func lastLiveHeapMB(log string) (mb float64, line string, ok bool) {
	m := gcLine.FindAllStringSubmatch(log, -1)
	if len(m) == 0 {
		return 0, "", false
	}
	live, _ := strconv.ParseFloat(m[len(m)-1][3], 64)
	return live * (1 << 20) / 1e6, m[len(m)-1][0], true
}
