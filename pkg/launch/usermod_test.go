package launch_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// userModule is testdata/usermod: a user's app in its own module (its own go.mod and go.sum,
// requiring funcgraph through a replace to this repository), with a main of a few lines.
var userModule = filepath.Join("testdata", "usermod")

// copyUserModule copies the user's module to a temporary folder, its replace pointed at this
// repository's root, so the commands run there as in a user's checkout and leave the source
// tree alone.
func copyUserModule(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "usermod")
	if err := os.CopyFS(dir, os.DirFS(userModule)); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	userGo(t, dir, nil, "mod", "edit", "-replace=github.com/funcgraph/funcgraph="+root)
	return dir
}

// userGo runs the go command in the user's module dir, offline from the module cache: the
// module's go.mod and go.sum pin every version, so no proxy or checksum database is asked.
func userGo(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// stageUserModule stages both folders of the user's module with the commands of docs/local.md and docs/deploy.md, run
// in the module's folder:
//
//	go build -o local/usermod . && ./local/usermod stage --out local
//	GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -trimpath -o dist/usermod .
//	go run . stage --target publish --out dist --exe usermod
func stageUserModule(t *testing.T) (local, dist string) {
	t.Helper()
	dir := copyUserModule(t)
	userGo(t, dir, nil, "build", "-o", "local/usermod", ".")
	stage := exec.Command("./local/usermod", "stage", "--out", "local")
	stage.Dir, stage.Env = dir, os.Environ()
	if out, err := stage.CombinedOutput(); err != nil {
		t.Fatalf("usermod stage: %v\n%s", err, out)
	}
	userGo(t, dir, []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"}, "build", "-trimpath", "-o", "dist/usermod", ".")
	userGo(t, dir, nil, "run", ".", "stage", "--target", "publish", "--out", "dist", "--exe", "usermod")
	return filepath.Join(dir, "local"), filepath.Join(dir, "dist")
}

// userFunctions are the functions the user's app declares: its hosted graph, the durable
// graph's runs API and the worker functions.
var userFunctions = []string{"fg_shout_invoke", "fg_health", "start_graph_run", "send_run_event", "fg_orchestrator", "fg_repair"}

// TestStage_UserModule_BothFolders: a module outside this repository stages, with only its
// own code and the documented commands, a local folder and a publish folder that Core Tools
// and the host accept, holding nothing but what the binary wrote.
func TestStage_UserModule_BothFolders(t *testing.T) {
	local, dist := stageUserModule(t)

	if problems := funchosttest.CheckPublishFolder(dist, userFunctions); len(problems) > 0 {
		t.Errorf("dist/ would not deploy:\n%s", strings.Join(problems, "\n"))
	}

	f, err := funchosttest.ReadFolder(local, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range userFunctions {
		if !slices.Contains(f.Functions, fn) {
			t.Errorf("local/: function %s missing (errors %v)", fn, f.FunctionErrors)
		}
	}
	if f.WorkerRuntime() != "custom" || f.LocalSettings.Values["AzureWebJobsStorage"] != "UseDevelopmentStorage=true" ||
		f.LocalSettings.Values["FUNCGRAPH_WORK_QUEUE"] != "funcgraph-work" || f.LocalSettings.IsEncrypted {
		t.Errorf("local/local.settings.json: %+v", f.LocalSettings)
	}
	if f.Executable != filepath.Join(f.Root, "usermod") || f.Config.ExecutablePath != "usermod" {
		t.Errorf("local/: executable %q (%v), host.json names %q", f.Executable, f.ExecutableErr, f.Config.ExecutablePath)
	}
	for _, folder := range []string{local, dist} {
		entries, err := os.ReadDir(folder)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			_, isFunction := os.Stat(filepath.Join(folder, e.Name(), "function.json"))
			if !slices.Contains([]string{"usermod", "host.json", "local.settings.json"}, e.Name()) && isFunction != nil {
				t.Errorf("%s holds %s, which stage did not write", folder, e.Name())
			}
		}
	}
}

// TestUserModule_Version: a user's binary answers --version with funcgraph's version and its
// own module, and exits 0, with no setting and no storage.
func TestUserModule_Version(t *testing.T) {
	dir := copyUserModule(t)
	userGo(t, dir, nil, "build", "-o", "usermod", ".")
	cmd := exec.Command("./usermod", "--version")
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("usermod --version: %v\n%s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	if lines[0] != "funcgraph "+launch.Version || !slices.Contains(lines, "app: example.com/usermod") {
		t.Errorf("usermod --version printed:\n%s", out)
	}
}
