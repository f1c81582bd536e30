package launch

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// exePathRe matches host.json's defaultExecutablePath member.
var exePathRe = regexp.MustCompile(`("defaultExecutablePath"\s*:\s*)"(?:[^"\\]|\\.)*"`)

// ErrNoExecutablePath is returned by SetExecutablePath for a host.json without
// customHandler.description.defaultExecutablePath.
var ErrNoExecutablePath = errors.New("host.json has no customHandler.description.defaultExecutablePath")

// SetExecutablePath returns hostJSON with customHandler.description.defaultExecutablePath set
// to exe, keeping everything else byte for byte.
func SetExecutablePath(hostJSON []byte, exe string) ([]byte, error) {
	var doc struct {
		CustomHandler *struct {
			Description *struct {
				DefaultExecutablePath *string `json:"defaultExecutablePath"`
			} `json:"description"`
		} `json:"customHandler"`
	}
	if err := json.Unmarshal(hostJSON, &doc); err != nil {
		return nil, fmt.Errorf("parse host.json: %w", err)
	}
	if doc.CustomHandler == nil || doc.CustomHandler.Description == nil || doc.CustomHandler.Description.DefaultExecutablePath == nil {
		return nil, ErrNoExecutablePath
	}
	if exe == "" || strings.ContainsAny(exe, `/\`) {
		return nil, fmt.Errorf("executable name %q: want a plain file name", exe)
	}
	quoted, err := json.Marshal(exe)
	if err != nil {
		return nil, err
	}
	n := 0
	out := exePathRe.ReplaceAllFunc(hostJSON, func(m []byte) []byte {
		n++
		return append(exePathRe.FindSubmatch(m)[1], quoted...)
	})
	if n != 1 {
		return nil, fmt.Errorf("host.json: %d defaultExecutablePath members, want 1", n)
	}
	return out, nil
}

// hostJSONCommand implements `hostjson [--in host.json] [--out path] [--exe name]`.
func hostJSONCommand(opts Options) error {
	fs := flag.NewFlagSet("hostjson", flag.ContinueOnError)
	in := fs.String("in", "host.json", "host.json to read")
	out := fs.String("out", "", "where to write (default: overwrite --in)")
	exe := fs.String("exe", opts.Program, "executable name the host starts")
	if err := fs.Parse(opts.Args[1:]); err != nil {
		return err
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("read host.json: %w", err)
	}
	data, err = SetExecutablePath(data, *exe)
	if err != nil {
		return err
	}
	dst := *out
	if dst == "" {
		dst = *in
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Errorf("write host.json: %w", err)
	}
	return nil
}

func programName() string {
	if len(os.Args) == 0 {
		return "funcgraph"
	}
	return filepath.Base(os.Args[0])
}
