package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"kubeplay/internal/copyfile"
)

// envtestAssets writes a KUBEBUILDER_ASSETS directory: kube-apiserver and
// etcd are this binary (which acts as the one it is named after), kubectl
// the one on PATH if any, and the file of kubeplay's own flags for its
// kube-apiserver.
func envtestAssets(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("envtest-assets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	controllers := fs.Bool("controllers", true, "run the namespace controller, the garbage collector and the other controllers of kube-controller-manager kubeplay has")
	workloads := fs.Bool("simulate-workloads", false, "also run the simulated Deployment, ReplicaSet and Job controllers, scheduler and kubelets")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return errors.New("usage: kubeplay envtest-assets [--controllers=false] [--simulate-workloads] DIR")
	}
	dir := fs.Arg(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := linkOrCopy(self, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	kubectl := "none on PATH"
	if path, err := exec.LookPath("kubectl"); err == nil {
		// A link to a (relative) symbolic link would not resolve from dir.
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return err
		}
		if err := linkOrCopy(path, filepath.Join(dir, "kubectl")); err != nil {
			return err
		}
		kubectl = path
	}

	var flags []string
	if !*controllers {
		flags = append(flags, "--kubeplay-controllers=false")
	}
	if *workloads {
		flags = append(flags, "--kubeplay-simulate-workloads=true")
	}
	argsFile := filepath.Join(dir, assetsArgsFile)
	if len(flags) == 0 {
		err = os.Remove(argsFile)
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	} else {
		err = os.WriteFile(argsFile, []byte("# flags kubeplay's kube-apiserver reads before its command line\n"+strings.Join(flags, "\n")+"\n"), 0o644)
	}
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "kubeplay: wrote kube-apiserver and etcd (kubeplay), kubectl (%s) to %s\n  export KUBEBUILDER_ASSETS=%s\n", kubectl, abs, abs)
	return err
}

// linkOrCopy makes dst the file src, by a hard link where the file system
// allows one, else by a copy; not a symbolic link, through which kubeplay
// would look for its flags file beside the link's target.
func linkOrCopy(src, dst string) error {
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	return copyfile.Executable(dst, src)
}
