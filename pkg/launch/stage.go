package launch

import (
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Stage targets: what the staged folder is for.
const (
	// stageLocal is a folder for `func start`: a native executable and a local.settings.json
	// with UseDevelopmentStorage=true (Azurite).
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

// stageCommand implements `stage [--target local|publish] [--out dir] [--exe name] [--binary
// path]`: it writes the complete app folder the host runs, for this app.
func stageCommand(app *App, s Settings, args []string, program string) error {
	fs := flag.NewFlagSet("stage", flag.ContinueOnError)
	target := fs.String("target", stageLocal, "local (for func start) or publish (for func azure functionapp publish)")
	out := fs.String("out", "", "folder to write (default local/ or dist/)")
	exe := fs.String("exe", program, "executable file name in the folder (host.json's defaultExecutablePath)")
	binary := fs.String("binary", "", "executable to copy into the folder (default: this one for local; for publish the folder must hold it)")
	if err := fs.Parse(args); err != nil {
		return err
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
	hostJSON, err := renderHostJSON(*exe, app.FunctionApp.RoutePrefix())
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
	defaults := map[string]string{}
	if *target == stageLocal {
		defaults[EnvStorage] = developmentStorage
	}
	if err := writeLocalSettings(filepath.Join(*out, "local.settings.json"), values, defaults); err != nil {
		return err
	}
	next := "cd " + *out + " && func start"
	if *target == stagePublish {
		next = "cd " + *out + " && func azure functionapp publish <app-name>"
	}
	s.Logger.Info("staged", "target", *target, "folder", *out, "executable", *exe, "next", next)
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

// writeLocalSettings writes local.settings.json as Core Tools reads it (IsEncrypted false,
// string Values): values are set, defaults only fill settings the file does not have, and
// everything else an existing file holds (the user's own settings) is kept.
func writeLocalSettings(path string, values, defaults map[string]string) error {
	doc := map[string]json.RawMessage{}
	current := map[string]string{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("stage: %w", err)
	default:
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("stage: %s is not a JSON object (fix or remove it): %w", path, err)
		}
		var encrypted bool
		if raw, ok := doc["IsEncrypted"]; ok && (json.Unmarshal(raw, &encrypted) != nil || encrypted) {
			return fmt.Errorf("stage: %s is encrypted (IsEncrypted); decrypt it with `func settings decrypt` first", path)
		}
		if raw, ok := doc["Values"]; ok {
			if err := json.Unmarshal(raw, &current); err != nil {
				return fmt.Errorf("stage: %s: Values: want string values: %w", path, err)
			}
		}
	}
	for k, v := range defaults {
		if _, ok := current[k]; !ok {
			current[k] = v
		}
	}
	for k, v := range values {
		current[k] = v
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
