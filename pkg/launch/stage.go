package launch

import (
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Stage targets: what the staged folder is for.
const (
	// stageLocal is a folder for `func start`: a native executable and a local.settings.json
	// for Azurite (UseDevelopmentStorage=true) that starts from the app root's own
	// local.settings.json when there is one (rootSettingsFile).
	stageLocal = "local"
	// stagePublish is a folder for `func azure functionapp publish`: a linux/amd64 executable
	// and a local.settings.json that tells Core Tools the worker runtime (it never uploads
	// the file).
	stagePublish = "publish"
)

// Settings stage writes into local.settings.json.
const (
	// envWorkerRuntime is FUNCTIONS_WORKER_RUNTIME; a custom handler's is "custom".
	envWorkerRuntime = "FUNCTIONS_WORKER_RUNTIME"
	// developmentStorage is the AzureWebJobsStorage of the local target: Azurite on its
	// default ports.
	developmentStorage = "UseDevelopmentStorage=true"
)

// rootSettingsFile is the app root's local.settings.json: the development settings of the
// app, kept next to its go.mod. `stage --target local` reads it from the working directory
// (the folder stage runs in, as `make local` runs it from the repository root); it is
// "present" when a file by that name is there and is not the very file being written (as
// with --out .). Its Values win over the staged folder's, and the values the app needs
// (FUNCTIONS_WORKER_RUNTIME, FUNCGRAPH_WORK_QUEUE, FUNCGRAPH_STORAGE_PREFIX) win over both.
const rootSettingsFile = "local.settings.json"

// stageCommand implements `stage [--target local|publish] [--out dir] [--exe name] [--binary
// path] [--proxying=true|false]`: it writes the complete app folder the host runs, for this
// app. The host.json proxies HTTP requests (renderHostJSON) unless told not to or per-user
// isolation is on, whose master-key admins need the key level only JSON invocations carry.
func stageCommand(app *App, s Settings, args []string, program string) error {
	fs := flag.NewFlagSet("stage", flag.ContinueOnError)
	target := fs.String("target", stageLocal, "local (for func start) or publish (for func azure functionapp publish)")
	out := fs.String("out", "", "folder to write (default local/ or dist/)")
	exe := fs.String("exe", program, "executable file name in the folder (host.json's defaultExecutablePath)")
	binary := fs.String("binary", "", "executable to copy into the folder (default: this one for local; for publish the folder must hold it)")
	proxying := fs.Bool("proxying", true, proxyingUsage+" (default: true unless per-user isolation is on)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	proxyingSet := false
	fs.Visit(func(f *flag.Flag) { proxyingSet = proxyingSet || f.Name == "proxying" })
	if !proxyingSet && s.Isolation != nil {
		// A proxied request carries no key level: the master key would not make an
		// isolation admin. JSON invocations keep it.
		*proxying = false
		s.Logger.Info("stage: per-user isolation is on: the host.json keeps JSON invocations (no proxying; the runs feed's event stream is a long poll); --proxying overrides")
	}
	want := [2]string{runtime.GOOS, runtime.GOARCH}
	switch *target {
	case stageLocal:
		if *out == "" {
			*out = "local"
		}
		if *binary == "" {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("stage: find this executable: %w", err)
			}
			*binary = self
		}
	case stagePublish:
		if *out == "" {
			*out = "dist"
		}
		want = [2]string{"linux", "amd64"}
	default:
		return fmt.Errorf("stage: --target %q: want %s or %s", *target, stageLocal, stagePublish)
	}
	hostJSON, err := renderHostJSON(*exe, app.FunctionApp.RoutePrefix(), *proxying)
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if err := placeExecutable(*out, *exe, *binary, want); err != nil {
		return err
	}
	if err := app.FunctionApp.WriteFunctions(*out); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if err := os.WriteFile(filepath.Join(*out, "host.json"), hostJSON, 0o644); err != nil {
		return fmt.Errorf("stage: write host.json: %w", err)
	}
	values := map[string]string{envWorkerRuntime: "custom", EnvStoragePrefix: s.Names.Prefix}
	for _, as := range app.FunctionApp.AppSettings() {
		values[as.Name] = as.Value
	}
	path := filepath.Join(*out, "local.settings.json")
	var root settingsFile
	defaults := map[string]string{}
	if *target == stageLocal {
		defaults[EnvStorage] = developmentStorage
		var err error
		if root, err = readRootSettings(path); err != nil {
			return err
		}
		if replaced := root.replacedBy(values); len(replaced) > 0 {
			s.Logger.Warn("stage: the app's own values replace settings of "+rootSettingsFile+" in the working directory", "settings", strings.Join(replaced, ", "))
		}
	}
	if err := writeLocalSettings(path, values, root, defaults); err != nil {
		return err
	}
	next := "cd " + *out + " && func start"
	if *target == stagePublish {
		next = "cd " + *out + " && func azure functionapp publish <app-name>"
	}
	s.Logger.Info("staged", "target", *target, "folder", *out, "executable", *exe, "settings_from", root.path, "next", next)
	return nil
}

// placeExecutable puts binary (when set) into dir as exe and checks that dir/exe is a Go
// executable for want (GOOS, GOARCH).
func placeExecutable(dir, exe, binary string, want [2]string) error {
	dst := filepath.Join(dir, exe)
	if binary != "" {
		if err := copyExecutable(binary, dst); err != nil {
			return fmt.Errorf("stage: copy the executable: %w", err)
		}
	}
	info, err := buildinfo.ReadFile(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stage: %s is missing: build it first (GOOS=%s GOARCH=%s CGO_ENABLED=0 go build -o %s <your main package>) or pass --binary",
			dst, want[0], want[1], dst)
	}
	if err != nil {
		return fmt.Errorf("stage: %s is not a Go executable: %w", dst, err)
	}
	var got [2]string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "GOOS":
			got[0] = kv.Value
		case "GOARCH":
			got[1] = kv.Value
		}
	}
	if got != want {
		return fmt.Errorf("stage: %s is built for %s/%s; this folder needs %s/%s (GOOS=%s GOARCH=%s go build -o %s ...)",
			dst, got[0], got[1], want[0], want[1], want[0], want[1], dst)
	}
	return os.Chmod(dst, 0o755)
}

// copyExecutable copies src to dst through a temporary file and a rename, so a running copy
// of dst is not disturbed; copying a file onto itself does nothing.
func copyExecutable(src, dst string) error {
	si, err := os.Stat(src)
	if err != nil {
		return err
	}
	if di, err := os.Stat(dst); err == nil && os.SameFile(si, di) {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".stage-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, in)
	err = errors.Join(err, tmp.Chmod(0o755), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// settingsFile is a local.settings.json as Core Tools reads it: its members, with Values
// decoded. The zero value is a missing file.
type settingsFile struct {
	path   string                     // "" when there is no file
	doc    map[string]json.RawMessage // every member, Values included
	values map[string]string
}

// readSettingsFile reads the local.settings.json at path; a missing file is the zero
// settingsFile. It refuses a file that is not a JSON object, an encrypted one (IsEncrypted)
// and Values that are not all strings.
func readSettingsFile(path string) (settingsFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return settingsFile{}, nil
	}
	if err != nil {
		return settingsFile{}, fmt.Errorf("stage: %w", err)
	}
	f := settingsFile{path: path, doc: map[string]json.RawMessage{}, values: map[string]string{}}
	if err := json.Unmarshal(data, &f.doc); err != nil {
		return settingsFile{}, fmt.Errorf("stage: %s is not a JSON object (fix or remove it): %w", path, err)
	}
	var encrypted bool
	if raw, ok := f.doc["IsEncrypted"]; ok && (json.Unmarshal(raw, &encrypted) != nil || encrypted) {
		return settingsFile{}, fmt.Errorf("stage: %s is encrypted (IsEncrypted); decrypt it with `func settings decrypt` first", path)
	}
	if raw, ok := f.doc["Values"]; ok {
		if err := json.Unmarshal(raw, &f.values); err != nil {
			return settingsFile{}, fmt.Errorf("stage: %s: Values: want string values: %w", path, err)
		}
	}
	return f, nil
}

// readRootSettings reads rootSettingsFile from the working directory, unless it is the file
// at staged, which stage is about to write (then there is no root file to start from).
func readRootSettings(staged string) (settingsFile, error) {
	if si, err := os.Stat(staged); err == nil {
		if ri, err := os.Stat(rootSettingsFile); err == nil && os.SameFile(si, ri) {
			return settingsFile{}, nil
		}
	}
	return readSettingsFile(rootSettingsFile)
}

// replacedBy lists, sorted, the settings of f that values sets to something else.
func (f settingsFile) replacedBy(values map[string]string) []string {
	var out []string
	for k, v := range f.values {
		if want, ok := values[k]; ok && want != v {
			out = append(out, fmt.Sprintf("%s=%q (the app's: %q)", k, v, want))
		}
	}
	slices.Sort(out)
	return out
}

// writeLocalSettings writes local.settings.json at path as Core Tools reads it (IsEncrypted
// false, string Values). Each setting comes from the first of: values (what the app needs),
// root's Values (the app root's own file), the file already at path (settings the user added
// there), defaults. The members of root other than Values (Host, ConnectionStrings) replace
// those of the file at path; everything else that file holds is kept.
func writeLocalSettings(path string, values map[string]string, root settingsFile, defaults map[string]string) error {
	cur, err := readSettingsFile(path)
	if err != nil {
		return err
	}
	doc, current := cur.doc, cur.values
	if doc == nil {
		doc, current = map[string]json.RawMessage{}, map[string]string{}
	}
	for k, raw := range root.doc {
		if k != "Values" && k != "IsEncrypted" {
			doc[k] = raw
		}
	}
	for _, layer := range []map[string]string{root.values, values} {
		maps.Copy(current, layer)
	}
	for k, v := range defaults {
		if _, ok := current[k]; !ok {
			current[k] = v
		}
	}
	doc["IsEncrypted"] = json.RawMessage("false")
	vals, err := json.Marshal(current)
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	doc["Values"] = vals
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		return fmt.Errorf("stage: write local.settings.json: %w", err)
	}
	return nil
}
