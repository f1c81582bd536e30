package funchost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FunctionJSON is the content of one function.json file.
type FunctionJSON struct {
	Bindings []Binding `json:"bindings"`
}

// Binding is one entry of function.json's `bindings`.
type Binding struct {
	Type         string   `json:"type"`
	Direction    string   `json:"direction"`
	Name         string   `json:"name"`
	AuthLevel    string   `json:"authLevel,omitempty"`
	Methods      []string `json:"methods,omitempty"`
	Route        string   `json:"route,omitempty"`
	QueueName    string   `json:"queueName,omitempty"`
	Connection   string   `json:"connection,omitempty"`
	DataType     string   `json:"dataType,omitempty"`
	Schedule     string   `json:"schedule,omitempty"`
	RunOnStartup *bool    `json:"runOnStartup,omitempty"`
	UseMonitor   *bool    `json:"useMonitor,omitempty"`
}

// DefaultConnection is the app setting the storage bindings use unless told otherwise.
const DefaultConnection = "AzureWebJobsStorage"

// FunctionJSONs returns every function's function.json content by function name. A queue
// name bound to an app setting (BindQueueName) is written as the binding expression
// `%SETTING%`, which the host resolves from the app settings when it indexes the functions.
func (a *FunctionApp) FunctionJSONs() map[string]FunctionJSON {
	out := map[string]FunctionJSON{}
	for _, f := range a.HTTPFunctions() {
		methods := make([]string, 0, len(f.Methods))
		for _, m := range f.Methods {
			methods = append(methods, strings.ToLower(m))
		}
		slices.Sort(methods)
		out[f.Name] = FunctionJSON{Bindings: []Binding{
			{Type: "httpTrigger", Direction: "in", Name: httpTriggerBinding, AuthLevel: string(f.AuthLevel),
				Methods: slices.Compact(methods), Route: strings.Trim(f.Route, "/")},
			{Type: "http", Direction: "out", Name: httpOutputBinding},
		}}
	}
	for _, q := range a.QueueFunctions() {
		b := []Binding{{Type: "queueTrigger", Direction: "in", Name: queueTriggerBinding, QueueName: a.queueNameExpr(q.QueueName), Connection: connection(q.Connection)}}
		out[q.Name] = FunctionJSON{Bindings: append(b, a.outputBindings(q.Outputs)...)}
	}
	for _, t := range a.TimerFunctions() {
		runOnStartup, useMonitor := t.RunOnStartup, t.UseMonitor
		b := []Binding{{Type: "timerTrigger", Direction: "in", Name: timerTriggerBinding, Schedule: t.Schedule,
			RunOnStartup: &runOnStartup, UseMonitor: &useMonitor}}
		out[t.Name] = FunctionJSON{Bindings: append(b, a.outputBindings(t.Outputs)...)}
	}
	return out
}

func connection(c string) string {
	if c == "" {
		return DefaultConnection
	}
	return c
}

func (a *FunctionApp) outputBindings(outs []OutputBinding) []Binding {
	var bs []Binding
	for _, o := range outs {
		b := Binding{Type: o.Type, Direction: "out", Name: o.Name, QueueName: a.queueNameExpr(o.QueueName), DataType: o.DataType}
		if o.Type == "queue" || o.Connection != "" {
			b.Connection = connection(o.Connection)
		}
		bs = append(bs, b)
	}
	return bs
}

// marshal renders a function.json file: two-space indentation and a trailing newline.
func (f FunctionJSON) marshal() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		panic(fmt.Sprintf("funchost: encode function.json: %v", err)) // plain structs always encode
	}
	return buf.Bytes()
}

// WriteFunctions writes `<dir>/<name>/function.json` for every function and removes function
// folders (folders holding a function.json) that the app no longer has. Other files are left
// alone.
func (a *FunctionApp) WriteFunctions(dir string) error {
	want := a.FunctionJSONs()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write functions: %w", err)
	}
	existing, err := functionFolders(dir)
	if err != nil {
		return err
	}
	for _, name := range existing {
		if _, ok := want[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name, "function.json")); err != nil {
				return fmt.Errorf("write functions: remove stale %s: %w", name, err)
			}
			_ = os.Remove(filepath.Join(dir, name)) // only succeeds when empty
		}
	}
	for name, fj := range want {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			return fmt.Errorf("write functions: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "function.json"), fj.marshal(), 0o644); err != nil {
			return fmt.Errorf("write functions: %w", err)
		}
	}
	return nil
}

// DiffFunctions compares dir with what WriteFunctions would write and describes every
// difference (missing, stale or changed function folders). An empty result means no drift.
func (a *FunctionApp) DiffFunctions(dir string) ([]string, error) {
	want := a.FunctionJSONs()
	existing, err := functionFolders(dir)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for _, name := range existing {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: folder exists but the app has no such function", name))
		}
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(dir, name, "function.json"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			diffs = append(diffs, fmt.Sprintf("%s: function.json is missing", name))
		case err != nil:
			return nil, fmt.Errorf("diff functions: %w", err)
		case !bytes.Equal(got, want[name].marshal()):
			diffs = append(diffs, fmt.Sprintf("%s: function.json differs from the generated one", name))
		}
	}
	return diffs, nil
}

// functionFolders lists the direct subfolders of dir that hold a function.json.
func functionFolders(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list functions: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "function.json")); err == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
